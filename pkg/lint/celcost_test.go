package lint_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/admitd/admitd/internal/openapi"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/lint"
)

// builtinSchemas are admitd's built-in kinds and schemas, as the admitd
// command passes them.
var builtinSchemas = sync.OnceValue(func() lint.Schemas {
	cat := registry.NewCatalogue()
	return openapi.PolicySchemas{Service: openapi.New(cat, openapi.Options{}), Catalogue: cat}
})

// widgetCRD defines widgets (example.com/v1): spec.items is a list of
// objects without maxItems, spec.bounded one with maxItems 10 and short
// names.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
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
            properties:
              items:
                type: array
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    tags: {type: array, items: {type: string}}
              bounded:
                type: array
                maxItems: 10
                items:
                  type: object
                  properties:
                    name: {type: string, maxLength: 63}
`

// policyYAML is a ValidatingAdmissionPolicy matching resources of group
// and version with one validation expression.
func policyYAML(group, version, resources, expression string) string {
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints:
    resourceRules: [{operations: [CREATE, UPDATE], apiGroups: [%q], apiVersions: [%q], resources: [%s]}]
  validations:
  - expression: %q
`, group, version, resources, expression)
}

// TestCELCostTyped checks AL030 with the schemas upstream has: everyday
// loops over built-in and CRD lists are clean; what upstream's estimator
// refuses (above StaticEstimatedCostLimit) is a warning, what comes near
// it is info; without a schema sizes are bounded by the request.
func TestCELCostTyped(t *testing.T) {
	cases := []struct {
		name, group, version, resources, expression string
		want                                        string // "", "info" or "warning"
	}{
		{"containers all startsWith", "", "v1", "pods", "object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))", ""},
		{"template containers exists", "apps", "v1", "deployments", "object.spec.template.spec.containers.exists(c, c.name == 'sidecar')", ""},
		{"containers env all", "", "v1", "pods", "object.spec.containers.all(c, !has(c.env) || c.env.all(e, e.name != 'SECRET'))", "warning"},
		{"containers two checks", "", "v1", "pods", "object.spec.containers.all(c, c.image.startsWith('registry.example.com/') && c.name != 'debug')", "warning"},
		{"containers near the limit", "", "v1", "pods", "object.spec.containers.all(c, c.image != 'a' && c.name != 'debug')", "info"},
		{"contains on unbounded strings", "", "v1", "pods", "object.spec.containers.all(c, c.image.contains('latest'))", "warning"},
		{"containers endsWith", "", "v1", "pods", "object.spec.containers.all(c, c.image.endsWith(':v1'))", ""},
		{"containers three checks", "", "v1", "pods", "object.spec.containers.all(c, c.image.startsWith('a/') || c.image.startsWith('b/') || c.image.startsWith('c/'))", "warning"},
		{"labels all", "", "v1", "pods, configmaps", "object.metadata.labels.all(k, k.size() < 64)", ""},
		{"unique container names", "", "v1", "pods", "object.spec.containers.all(c, object.spec.containers.exists_one(d, d.name == c.name))", "warning"},
		{"crd items all", "example.com", "v1", "widgets", "object.spec.items.all(i, i.name != '')", ""},
		{"crd nested unbounded", "example.com", "v1", "widgets", "object.spec.items.all(i, object.spec.items.all(j, i.name != j.name || i == j))", "warning"},
		{"crd nested bounded", "example.com", "v1", "widgets", "object.spec.bounded.all(i, object.spec.bounded.all(j, i.name != j.name || i == j))", ""},
		{"no schema: wildcard", "*", "*", "'*'", "object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))", "warning"},
		{"no schema: no loop", "*", "*", "'*'", "object.metadata.name.startsWith('x')", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &lint.Set{}
			if err := s.Decode(strings.NewReader(widgetCRD+"---\n"+policyYAML(c.group, c.version, c.resources, c.expression)), c.name); err != nil {
				t.Fatal(err)
			}
			got, msg := "", ""
			for _, f := range lint.Run(context.Background(), s, lint.Options{Schemas: builtinSchemas()}) {
				switch f.ID {
				case lint.CELNearCostLimit:
					got, msg = f.Severity.String(), f.Message
				case lint.CELCompileError:
					t.Fatalf("AL031: %s", f.Message)
				}
			}
			t.Log(msg)
			if got != c.want {
				t.Errorf("AL030 of %s = %q, want %q (%s)", c.expression, got, c.want, msg)
			}
		})
	}
}

// TestTypedFixtures lints testdata/typed/*.yaml as admitd lint does, with
// the built-in schemas, and checks each produces exactly the rule IDs of
// its "# want:" line.
func TestTypedFixtures(t *testing.T) {
	paths, err := filepath.Glob("testdata/typed/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(string(data), "\n") {
				if rest, ok := strings.CutPrefix(line, "# want:"); ok {
					want = strings.Fields(rest)
				}
			}
			s := &lint.Set{}
			if err := s.Decode(bytes.NewReader(data), p); err != nil {
				t.Fatal(err)
			}
			fs := lint.Run(context.Background(), s, lint.Options{Schemas: builtinSchemas()})
			var got []string
			for _, f := range fs {
				if !slices.Contains(got, f.ID) {
					got = append(got, f.ID)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				var b bytes.Buffer
				_ = lint.WriteText(&b, fs)
				t.Errorf("Run(%s) found %v, want %v\n%s", p, got, want, b.String())
			}
		})
	}
}

// TestCELCostOfAMessageExpressionIsInfo: a messageExpression far above
// the limit (mapping and joining every container's image) is info, as
// its failure only loses the message; the same expression deciding the
// request is a warning. Info is not an API warning on the policy's write.
func TestCELCostOfAMessageExpressionIsInfo(t *testing.T) {
	const costly = "object.spec.containers.map(c, c.image).join(', ')"
	cases := []struct {
		name, validation, want string
	}{
		{"message", "  - expression: \"object.spec.containers.all(c, c.name != '')\"\n    messageExpression: \"'images: ' + " + costly + "\"\n", "info"},
		{"decision", "  - expression: \"(" + costly + ").size() < 1000\"\n", "warning"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.SplitAfter(policyYAML("", "v1", "pods", "true"), "  validations:\n")[0] + c.validation
			s := &lint.Set{}
			if err := s.Decode(strings.NewReader(doc), c.name); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range lint.Run(context.Background(), s, lint.Options{Schemas: builtinSchemas()}) {
				if f.ID == lint.CELNearCostLimit {
					got = append(got, f.Severity.String())
					if c.want == "info" && !strings.Contains(f.Message, "only the message is at stake") {
						t.Errorf("message %q does not say only the message is at stake", f.Message)
					}
				}
			}
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("AL030 findings %v, want one %s", got, c.want)
			}
			// the API server's warnings on a write leave info out
			warnings := lint.Warnings(s.ValidatingPolicies[0], builtinSchemas())
			if wantWarnings := map[string]int{"info": 0, "warning": 1}[c.want]; len(warnings) != wantWarnings {
				t.Errorf("API warnings %q, want %d", warnings, wantWarnings)
			}
		})
	}
}
