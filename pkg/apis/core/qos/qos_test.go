package qos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

type gates map[string]bool

func (g gates) Enabled(name string) bool { return g[name] }

func requirements(req, lim string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{}
	if req != "" {
		r.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(req), corev1.ResourceMemory: resource.MustParse("1Gi")}
	}
	if lim != "" {
		r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(lim), corev1.ResourceMemory: resource.MustParse("1Gi")}
	}
	return r
}

func podOf(rs ...corev1.ResourceRequirements) *corev1.Pod {
	p := &corev1.Pod{}
	for _, r := range rs {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: r})
	}
	return p
}

func TestCompute(t *testing.T) {
	on := gates{gatePodLevelResources: true, gatePodLevelResourcesFixQOS: true}
	guaranteed := requirements("1", "1")
	podLevel := podOf(corev1.ResourceRequirements{})
	podLevel.Spec.Resources = &guaranteed
	withStatus := podOf()
	withStatus.Status.QOSClass = corev1.PodQOSGuaranteed
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		g    gates
		want corev1.PodQOSClass
	}{
		{"no containers", podOf(), on, corev1.PodQOSBestEffort},
		{"nothing stated", podOf(corev1.ResourceRequirements{}), on, corev1.PodQOSBestEffort},
		{"requests equal limits", podOf(guaranteed, guaranteed), on, corev1.PodQOSGuaranteed},
		{"requests below limits", podOf(requirements("500m", "1")), on, corev1.PodQOSBurstable},
		{"guaranteed and best effort", podOf(guaranteed, corev1.ResourceRequirements{}), on, corev1.PodQOSBurstable},
		{"requests only", podOf(requirements("1", "")), on, corev1.PodQOSBurstable},
		{"pod-level resources decide", podLevel, on, corev1.PodQOSGuaranteed},
		{"pod-level resources without the gate", podLevel, gates{}, corev1.PodQOSBestEffort},
		{"status is not read", withStatus, on, corev1.PodQOSBestEffort},
	} {
		if got := Compute(tc.pod, tc.g); got != tc.want {
			t.Errorf("%s: Compute = %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := Of(withStatus, on); got != corev1.PodQOSGuaranteed {
		t.Errorf("Of reads the status: got %s", got)
	}
}
