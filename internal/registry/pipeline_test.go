package registry

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// TestStatusRuleOnCreate checks the three status rules of a create: reset
// (Deployment, and a custom resource with a status subresource), kept
// (Node), and the kind's own initial status (Pod).
func TestStatusRuleOnCreate(t *testing.T) {
	crd := CustomResources(&apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com", Scope: apiextensionsv1.NamespaceScoped, Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}}}}})[0]
	for _, tc := range []struct {
		name      string
		res       *Resource
		obj       runtime.Object
		hasStatus func(runtime.Object) bool
		want      bool
	}{
		{"Deployment is reset", resourceFor(t, &appsv1.Deployment{}), &appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 3}},
			func(o runtime.Object) bool { return o.(*appsv1.Deployment).Status.Replicas != 0 }, false},
		{"Node is kept", resourceFor(t, &corev1.Node{}), &corev1.Node{Status: corev1.NodeStatus{Phase: corev1.NodeRunning}},
			func(o runtime.Object) bool { return o.(*corev1.Node).Status.Phase == corev1.NodeRunning }, true},
		{"Pod starts Pending", resourceFor(t, &corev1.Pod{}), &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}},
			func(o runtime.Object) bool { return o.(*corev1.Pod).Status.Phase == corev1.PodRunning }, false},
		{"custom resource is reset", crd, &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"ready": true}}},
			func(o runtime.Object) bool { _, ok := o.(*unstructured.Unstructured).Object["status"]; return ok }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			PrepareForCreate(tc.res, tc.obj)
			if got := tc.hasStatus(tc.obj); got != tc.want {
				t.Errorf("status sent survives create = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStatusRuleOnUpdate checks that a write of the main resource keeps the
// stored status and a status write keeps only the new status, and that
// generation grows with the spec only.
func TestStatusRuleOnUpdate(t *testing.T) {
	deployments := resourceFor(t, &appsv1.Deployment{})
	old := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 4},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)}, Status: appsv1.DeploymentStatus{Replicas: 1}}
	changed := func() *appsv1.Deployment {
		d := old.DeepCopy()
		d.Spec.Replicas, d.Status.Replicas = ptr.To[int32](5), 5
		return d
	}
	for _, tc := range []struct {
		subresource          string
		wantSpec, wantStatus int32
		wantGeneration       int64
	}{
		{"", 5, 1, 5},
		{"status", 1, 5, 4},
	} {
		got := PrepareForUpdate(deployments, tc.subresource, changed(), old).(*appsv1.Deployment)
		if *got.Spec.Replicas != tc.wantSpec || got.Status.Replicas != tc.wantStatus || got.Generation != tc.wantGeneration {
			t.Errorf("PrepareForUpdate(%q) = spec %d, status %d, generation %d; want %d, %d, %d", tc.subresource,
				*got.Spec.Replicas, got.Status.Replicas, got.Generation, tc.wantSpec, tc.wantStatus, tc.wantGeneration)
		}
	}
}
