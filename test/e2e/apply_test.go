package e2e

import (
	"slices"
	"strings"
	"testing"
)

const applyConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: default
data:
  a: "1"
`

// TestApplyServerSideTwice: a second identical server-side apply changes
// nothing, not even resourceVersion or managedFields.
func TestApplyServerSideTwice(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	if out := a.MustKubectl(t, applyConfigMap, "apply", "--server-side", "-f", "-"); !strings.Contains(out, "configmap/cfg serverside-applied") {
		t.Fatalf("first apply --server-side = %q, want serverside-applied", out)
	}
	meta := `jsonpath={.metadata.resourceVersion} {.metadata.managedFields[*].manager}/{.metadata.managedFields[*].operation} {.metadata.managedFields[*].time}`
	before := a.MustKubectl(t, "", "get", "configmap", "cfg", "-o", meta)
	if !strings.Contains(before, " kubectl/Apply ") {
		t.Errorf("after apply --server-side: %q, want the manager kubectl/Apply", before)
	}
	if out := a.MustKubectl(t, applyConfigMap, "apply", "--server-side", "-f", "-"); !strings.Contains(out, "configmap/cfg serverside-applied") {
		t.Errorf("second apply --server-side = %q, want serverside-applied", out)
	}
	if after := a.MustKubectl(t, "", "get", "configmap", "cfg", "-o", meta); after != before {
		t.Errorf("after a no-op apply: %q, want unchanged %q", after, before)
	}
}

// TestApplyServerSideConflicts: conflicts between managers are printed as
// kubectl prints them, and --force-conflicts takes the fields over.
func TestApplyServerSideConflicts(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	if out := a.MustKubectl(t, applyConfigMap, "apply", "-f", "-"); !strings.Contains(out, "configmap/cfg created") {
		t.Fatalf("client-side apply = %q, want created", out)
	}
	changed := strings.Replace(applyConfigMap, `a: "1"`, `a: "2"`, 1)
	_, errOut, err := a.Kubectl(t, changed, "apply", "--server-side", "--field-manager=ssa", "-f", "-")
	want := "error: Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1: .data.a\n" +
		"Please review the fields above--they currently have other managers."
	if err == nil || !strings.Contains(errOut, want) {
		t.Fatalf("apply --server-side over client-side apply: err=%v stderr=%q, want it to contain %q", err, errOut, want)
	}
	// The manager "kubectl" upgrades from client-side apply: the fields whose
	// live value is still the last-applied one are taken over.
	if out := a.MustKubectl(t, changed, "apply", "--server-side", "-f", "-"); !strings.Contains(out, "configmap/cfg serverside-applied") {
		t.Fatalf("apply --server-side as kubectl = %q, want serverside-applied", out)
	}

	b := strings.Replace(applyConfigMap, `a: "1"`, `b: "alice"`, 1)
	a.MustKubectl(t, b, "apply", "--server-side", "--field-manager=alice", "-f", "-")
	bob := strings.Replace(b, "alice", "bob", 1)
	_, errOut, err = a.Kubectl(t, bob, "apply", "--server-side", "--field-manager=bob", "-f", "-")
	if want := `error: Apply failed with 1 conflict: conflict with "alice": .data.b`; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("bob's apply: err=%v stderr=%q, want it to contain %q", err, errOut, want)
	}
	if out := a.MustKubectl(t, bob, "apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-f", "-"); !strings.Contains(out, "configmap/cfg serverside-applied") {
		t.Fatalf("apply --force-conflicts = %q, want serverside-applied", out)
	}
	got := a.MustKubectl(t, "", "get", "configmap", "cfg", "-o", `jsonpath={.data.a} {.data.b} {range .metadata.managedFields[*]}{.manager} {end}`)
	if managers := strings.Fields(got)[2:]; !strings.HasPrefix(got, "2 bob ") || !slices.Contains(managers, "bob") || slices.Contains(managers, "alice") {
		t.Errorf("data and managers after --force-conflicts = %q, want a=2, b=bob, bob a manager and alice none", got)
	}
}

// TestApplyClientSideStillWorks: kubectl apply without --server-side
// (strategic merge patches and the last-applied annotation).
func TestApplyClientSideStillWorks(t *testing.T) {
	t.Parallel()
	// Without the workload controllers, whose status writes would add
	// kube-controller-manager to the Deployment's managers.
	a := startAdmitd(t, t.TempDir(), withoutWorkloadControllers)
	a.MustKubectl(t, "", "create", "namespace", "team-a")
	steps := []struct{ manifest, want string }{
		{deploymentManifest, "deployment.apps/api created"},
		{deploymentManifest, "deployment.apps/api unchanged"},
		{strings.Replace(deploymentManifest, "api:v1", "api:v2", 1), "deployment.apps/api configured"},
	}
	for _, st := range steps {
		if out := a.MustKubectl(t, st.manifest, "apply", "-f", "-"); !strings.Contains(out, st.want) {
			t.Errorf("kubectl apply = %q, want %q", out, st.want)
		}
	}
	got := a.MustKubectl(t, "", "get", "deploy", "api", "-n", "team-a", "-o",
		`jsonpath={.spec.template.spec.containers[0].image} {.metadata.managedFields[*].manager}`)
	if got != "example.com/api:v2 kubectl-client-side-apply" {
		t.Errorf("image and managers = %q, want example.com/api:v2 kubectl-client-side-apply", got)
	}
	last := a.MustKubectl(t, "", "get", "deploy", "api", "-n", "team-a", "-o",
		`jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`)
	if !strings.Contains(last, `"image":"example.com/api:v2"`) {
		t.Errorf("last-applied-configuration = %q, want the applied v2 manifest", last)
	}
}

const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  conversion: {strategy: None}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

const gadget = `apiVersion: example.com/v1
kind: Gadget
metadata: {name: g1, namespace: default}
spec:
  size: 1
  ports:
  - {name: http, port: 80}
`

// TestApplyServerSideCustomResource: apply of a custom resource merges with
// the definition's schema (a map-list merges by key), reports conflicts and
// applies the status subresource.
func TestApplyServerSideCustomResource(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, gadgetCRD, "apply", "-f", "-")
	if out := a.MustKubectl(t, gadget, "apply", "--server-side", "-f", "-"); !strings.Contains(out, "gadget.example.com/g1 serverside-applied") {
		t.Fatalf("apply --server-side gadget = %q, want serverside-applied", out)
	}
	https := "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1, namespace: default}\nspec:\n  ports:\n  - {name: https, port: 443}\n"
	a.MustKubectl(t, https, "apply", "--server-side", "--field-manager=ops", "-f", "-")
	if got := a.MustKubectl(t, "", "get", "gadget", "g1", "-o", "jsonpath={.spec.ports[*].name}"); got != "http https" {
		t.Errorf("ports after two appliers = %q, want http https", got)
	}
	resize := "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1, namespace: default}\nspec: {size: 5}\n"
	_, errOut, err := a.Kubectl(t, resize, "apply", "--server-side", "--field-manager=ops", "-f", "-")
	if want := `error: Apply failed with 1 conflict: conflict with "kubectl": .spec.size`; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("conflicting gadget apply: err=%v stderr=%q, want it to contain %q", err, errOut, want)
	}
	status := "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1, namespace: default}\nstatus: {ready: true}\n"
	if out := a.MustKubectl(t, status, "apply", "--server-side", "--subresource=status", "--field-manager=ctrl", "-f", "-"); !strings.Contains(out, "serverside-applied") {
		t.Errorf("status apply = %q, want serverside-applied", out)
	}
	got := strings.Fields(a.MustKubectl(t, "", "get", "gadget", "g1", "-o",
		`jsonpath={.status.ready} {.spec.size} {range .metadata.managedFields[*]}{.manager}/{.subresource} {end}`))
	slices.Sort(got[2:]) // entries are ordered by time, to the second
	if want := []string{"true", "1", "ctrl/status", "kubectl/", "ops/"}; !slices.Equal(got, want) {
		t.Errorf("status, size and managers = %q, want %q", got, want)
	}
}
