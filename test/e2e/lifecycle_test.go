package e2e

import (
	"strings"
	"testing"
)

const twoVersionCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  conversion: {strategy: None}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}
  - name: v1beta1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}
`

// TestKubectlCRDLifecycleTwoVersions: an object created through one
// version is read through the other; deleting the CRD removes its objects
// and its resource.
func TestKubectlCRDLifecycleTwoVersions(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, twoVersionCRD, "apply", "-f", "-")
	a.MustKubectl(t, "apiVersion: example.com/v1beta1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 3}\n", "apply", "-f", "-")
	if got := a.MustKubectl(t, "", "get", "widgets.v1.example.com", "w1", "-o", "jsonpath={.apiVersion} {.spec.size}"); got != "example.com/v1 3" {
		t.Errorf("w1 read through v1 = %q, want example.com/v1 3", got)
	}
	if got := a.MustKubectl(t, "", "get", "widgets.v1beta1.example.com", "w1", "-o", "jsonpath={.apiVersion}"); got != "example.com/v1beta1" {
		t.Errorf("w1 read through v1beta1 = %q, want example.com/v1beta1", got)
	}
	a.MustKubectl(t, "", "delete", "crd", "widgets.example.com")
	a.MustKubectl(t, twoVersionCRD, "apply", "-f", "-")
	if out := a.MustKubectl(t, "", "get", "widgets", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("widgets after the CRD was deleted and created again = %q, want none", out)
	}
}

// TestKubectlNamespaceDeletionCascades: deleting a namespace deletes its
// content and then the namespace; kubectl waits for both.
func TestKubectlNamespaceDeletionCascades(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, "", "create", "namespace", "doomed")
	a.MustKubectl(t, "", "create", "configmap", "c", "-n", "doomed")
	a.MustKubectl(t, "", "create", "deployment", "d", "-n", "doomed", "--image=nginx")
	out := a.MustKubectl(t, "", "delete", "namespace", "doomed", "--timeout=30s")
	if !strings.Contains(out, `namespace "doomed" deleted`) {
		t.Fatalf("kubectl delete namespace = %q", out)
	}
	if _, errOut, err := a.Kubectl(t, "", "get", "namespace", "doomed"); err == nil || !strings.Contains(errOut, `namespaces "doomed" not found`) {
		t.Fatalf("namespace after delete: err=%v stderr=%q, want NotFound", err, errOut)
	}
	a.MustKubectl(t, "", "create", "namespace", "doomed")
	if got := a.MustKubectl(t, "", "get", "configmaps,deployments", "-n", "doomed", "-o", "name"); strings.Contains(got, "configmap/c") || strings.Contains(got, "deployment") {
		t.Errorf("content of the recreated namespace = %q, want the old objects gone", got)
	}
}

const scalableCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: things, singular: thing, kind: Thing}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

// TestKubectlScaleCustomResource: kubectl scale through a CRD's scale
// subresource.
func TestKubectlScaleCustomResource(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, scalableCRD, "apply", "-f", "-")
	a.MustKubectl(t, "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t1}\nspec: {replicas: 1}\n", "apply", "-f", "-")
	if out := a.MustKubectl(t, "", "scale", "thing", "t1", "--replicas=4"); !strings.Contains(out, "thing.example.com/t1 scaled") {
		t.Fatalf("kubectl scale thing = %q", out)
	}
	if got := a.MustKubectl(t, "", "get", "thing", "t1", "-o", "jsonpath={.spec.replicas}"); got != "4" {
		t.Errorf("spec.replicas after scale = %q, want 4", got)
	}
}
