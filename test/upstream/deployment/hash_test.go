// Package deployment compares admitd's Deployment controller
// (internal/controllers/deployment) with upstream's pkg/controller.
package deployment

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers/deployment"
)

// The pod-template-hash of admitd's ReplicaSets is upstream's
// controller.ComputeHash, for templates with maps, pointers, quantities
// and slices, and collision counts (the ReplicaSet names, hence the
// adoption of a cluster's ReplicaSets, depend on it).
func TestComputeHashMatchesUpstream(t *testing.T) {
	templates := []corev1.PodTemplateSpec{
		{},
		{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}}},
		{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "a"}, Annotations: map[string]string{"x": "y"}},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "i", Args: []string{"a", "b"},
					Resources:       corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
					SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
				TerminationGracePeriodSeconds: ptr.To[int64](30), NodeSelector: map[string]string{"b": "2", "a": "1"},
				Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}}},
	}
	for i, tmpl := range templates {
		for _, collisions := range []*int32{nil, ptr.To[int32](0), ptr.To[int32](1), ptr.To[int32](7)} {
			want := controller.ComputeHash(&tmpl, collisions)
			if got := deployment.ComputeHash(&tmpl, collisions); got != want {
				t.Errorf("template %d, collisionCount %v: ComputeHash = %s, want upstream's %s", i, fmt.Sprint(ptr.Deref(collisions, -1)), got, want)
			}
		}
	}
}
