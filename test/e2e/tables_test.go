package e2e

import (
	"reflect"
	"strings"
	"testing"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
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
              size: {type: integer}
              color: {type: string}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
`

const widget = `apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: team-a}
spec: {size: 3, color: red}
`

// fields splits the output line that starts with first into its columns
// (nil when there is none). The header line starts with NAME (or NAMESPACE).
func fields(out, first string) []string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == first {
			return f
		}
	}
	return nil
}

// TestKubectlGetTables checks that kubectl get prints upstream's per-kind
// columns, computed by the server.
func TestKubectlGetTables(t *testing.T) {
	t.Parallel()
	// Without the workload controllers: the tables are of the objects as
	// created, with no ReplicaSet or pod of the Deployment.
	a := startAdmitd(t, t.TempDir(), withoutWorkloadControllers)
	a.MustKubectl(t, "", "create", "namespace", "team-a")
	a.MustKubectl(t, "", "create", "configmap", "settings", "-n", "team-a", "--from-literal=mode=fast", "--from-literal=size=3")
	a.MustKubectl(t, podManifest, "create", "-f", "-")
	a.MustKubectl(t, deploymentManifest, "apply", "-f", "-")
	a.MustKubectl(t, widgetCRD, "apply", "-f", "-")
	a.MustKubectl(t, widget, "apply", "-f", "-")

	steps := []struct {
		args        []string
		header, row []string
	}{
		{[]string{"get", "pods", "-n", "team-a"},
			[]string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}, []string{"web", "0/1", "Pending", "0"}},
		{[]string{"get", "pods", "-A"},
			[]string{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"}, []string{"team-a", "web", "0/1", "Pending", "0"}},
		{[]string{"get", "deploy", "-n", "team-a", "-o", "wide"},
			[]string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"}, []string{"api", "0/2", "0", "0"}},
		{[]string{"get", "cm", "-n", "team-a"},
			[]string{"NAME", "DATA", "AGE"}, []string{"settings", "2"}},
		{[]string{"get", "ns"},
			[]string{"NAME", "STATUS", "AGE"}, []string{"team-a", "Active"}},
		{[]string{"get", "widgets", "-n", "team-a", "-o", "wide"},
			[]string{"NAME", "SIZE", "COLOR", "AGE"}, []string{"w1", "3", "red"}},
		// apiextensions-apiserver 1.37's columns
		{[]string{"get", "crd"},
			[]string{"NAME", "SCOPE", "VERSIONS", "CREATED", "AT"}, []string{"widgets.example.com", "Namespaced", "v1(storage)"}},
	}
	for _, st := range steps {
		out := a.MustKubectl(t, "", st.args...)
		cmd := "kubectl " + strings.Join(st.args, " ")
		if got := fields(out, st.header[0]); !reflect.DeepEqual(got, st.header) {
			t.Errorf("%s header = %q, want %q\n%s", cmd, got, st.header, out)
		}
		got := fields(out, st.row[0])
		if len(got) < len(st.row) || !reflect.DeepEqual(got[:len(st.row)], st.row) {
			t.Errorf("%s row = %q, want it to start with %q\n%s", cmd, got, st.row, out)
		}
	}

	wide := fields(a.MustKubectl(t, "", "get", "deploy", "api", "-n", "team-a", "-o", "wide"), "api")
	if want := []string{"api", "example.com/api:v1", "app=api"}; len(wide) != 8 || !reflect.DeepEqual(wide[5:], want) {
		t.Errorf("kubectl get deploy api -o wide wide cells = %q, want containers, images, selector %q", wide, want)
	}
}
