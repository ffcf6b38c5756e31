package e2e

import (
	"strings"
	"testing"
)

const schemaWidgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.schema.e2e.io
spec:
  group: schema.e2e.io
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - {rule: "self.size <= self.maxSize", message: "size must not exceed maxSize"}
            properties:
              size: {type: integer, minimum: 1}
              maxSize: {type: integer, default: 5}
              color: {type: string, enum: [red, green], default: red}
`

func schemaWidgetYAML(name, spec string) string {
	return "apiVersion: schema.e2e.io/v1\nkind: Widget\nmetadata: {name: " + name + "}\nspec: " + spec + "\n"
}

func TestKubectlCustomResourceSchema(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, schemaWidgetCRD, "apply", "-f", "-")
	waitFor(t, "widgets are served", func() bool {
		_, _, err := a.Kubectl(t, "", "get", "widgets")
		return err == nil
	})

	a.MustKubectl(t, schemaWidgetYAML("plain", "{size: 2}"), "create", "-f", "-")
	if got := a.MustKubectl(t, "", "get", "widget", "plain", "-o", "jsonpath={.spec}"); got != `{"color":"red","maxSize":5,"size":2}` {
		t.Errorf("defaulted spec = %s", got)
	}

	// kubectl's default --validate=strict asks the server for Strict.
	_, errOut, err := a.Kubectl(t, schemaWidgetYAML("strict", "{size: 2, foo: 1}"), "create", "-f", "-")
	if want := `Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.foo"`; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("strict create: err=%v stderr=%q, want %q", err, errOut, want)
	}
	out, errOut, err := a.Kubectl(t, schemaWidgetYAML("warned", "{size: 2, foo: 1}"), "create", "--validate=warn", "-f", "-")
	if err != nil || !strings.Contains(errOut, `Warning: unknown field "spec.foo"`) || !strings.Contains(out, "widget.schema.e2e.io/warned created") {
		t.Errorf("warn create: err=%v stdout=%q stderr=%q, want a warning and the widget created", err, out, errOut)
	}
	out, errOut, err = a.Kubectl(t, schemaWidgetYAML("quiet", "{size: 2, foo: 1}"), "create", "--validate=false", "-f", "-")
	if err != nil || strings.Contains(errOut, "foo") || !strings.Contains(out, "created") {
		t.Errorf("ignore create: err=%v stdout=%q stderr=%q, want silent pruning", err, out, errOut)
	}
	if got := a.MustKubectl(t, "", "get", "widget", "quiet", "-o", "jsonpath={.spec}"); strings.Contains(got, "foo") {
		t.Errorf("pruned widget still has foo: %s", got)
	}

	for _, tc := range []struct{ name, spec, want string }{
		{"types", `{size: "big"}`, `spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`},
		{"required", "{color: red}", "spec.size: Required value"},
		{"enum", "{size: 1, color: pink}", `spec.color: Unsupported value: "pink": supported values: "red", "green"`},
		{"minimum", "{size: 0}", "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"},
		{"rule", "{size: 9}", "size must not exceed maxSize"},
	} {
		_, errOut, err := a.Kubectl(t, schemaWidgetYAML("bad-"+tc.name, tc.spec), "create", "-f", "-")
		if err == nil || !strings.Contains(errOut, `The Widget "bad-`+tc.name+`" is invalid`) || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: err=%v stderr=%q, want %q", tc.name, err, errOut, tc.want)
		}
	}
	// The same rules hold for an update.
	_, errOut, err = a.Kubectl(t, "", "patch", "widget", "plain", "--type=merge", "-p", `{"spec":{"size":7}}`)
	if err == nil || !strings.Contains(errOut, "size must not exceed maxSize") {
		t.Errorf("invalid patch: err=%v stderr=%q", err, errOut)
	}
}
