package registry

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func debugContainer(name, image string) corev1.EphemeralContainer {
	return corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: name, Image: image,
		Stdin: true, TTY: true}, TargetContainerName: "web"}
}

// ephemeralWrite runs a write of pod over old through
// pods/ephemeralcontainers as the server does: decoding defaults, the
// subresource's preparation, then its validation.
func ephemeralWrite(t *testing.T, pod, old *corev1.Pod) (*corev1.Pod, field.ErrorList) {
	t.Helper()
	res, ok := NewCatalogue().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	if !ok {
		t.Fatal("pods not served")
	}
	res.Default(pod)
	out := PrepareForUpdate(res, "ephemeralcontainers", pod, old).(*corev1.Pod)
	return out, res.ValidateSubresourceChange("ephemeralcontainers", out, old)
}

func storedPod() *corev1.Pod {
	pod := createdPod(corev1.RestartPolicyAlways)
	pod.UID, pod.Generation, pod.Labels = "u1", 1, map[string]string{"app": "web"}
	pod.Status.Phase = corev1.PodRunning
	return pod
}

func TestEphemeralContainersAddedOtherChangesDropped(t *testing.T) {
	old := storedPod()
	pod := old.DeepCopy()
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("dbg", "busybox")}
	pod.Spec.Containers[0].Image = "nginx:2"
	pod.Labels = map[string]string{"app": "changed"}
	pod.Status.Phase = corev1.PodFailed
	got, errs := ephemeralWrite(t, pod, old)
	if len(errs) > 0 {
		t.Fatalf("adding an ephemeral container: %v", errs)
	}
	if len(got.Spec.EphemeralContainers) != 1 || got.Spec.EphemeralContainers[0].Name != "dbg" {
		t.Errorf("ephemeral containers = %+v", got.Spec.EphemeralContainers)
	}
	if got.Spec.EphemeralContainers[0].TerminationMessagePolicy == "" {
		t.Errorf("ephemeral container not defaulted: %+v", got.Spec.EphemeralContainers[0])
	}
	if got.Spec.Containers[0].Image != "nginx:1.25" || got.Labels["app"] != "web" || got.Status.Phase != corev1.PodRunning {
		t.Errorf("changes outside spec.ephemeralContainers kept: image %q, labels %v, phase %q",
			got.Spec.Containers[0].Image, got.Labels, got.Status.Phase)
	}
	if got.Generation != 2 {
		t.Errorf("generation = %d, want 2", got.Generation)
	}
}

func TestEphemeralContainersMayNotChangeOrGo(t *testing.T) {
	old := storedPod()
	old.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("dbg", "busybox")}
	defaultPod(old)
	changed := old.DeepCopy()
	changed.Spec.EphemeralContainers[0].Image = "alpine"
	removed := old.DeepCopy()
	removed.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("other", "busybox")}
	static := storedPod()
	static.Spec.NodeName = "node-1"
	static.Annotations = map[string]string{mirrorPodAnnotation: "x"}
	staticNew := static.DeepCopy()
	staticNew.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("dbg", "busybox")}
	invalid := storedPod()
	invalid.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("web", "busybox")}
	for _, tc := range []struct {
		name      string
		pod, old  *corev1.Pod
		wantField string
		want      string
	}{
		{"changed", changed, old, "spec.ephemeralContainers", `existing ephemeral containers "dbg" may not be changed`},
		{"removed", removed, old, "spec.ephemeralContainers", `existing ephemeral containers "dbg" may not be removed`},
		{"static pod", staticNew, static, field.NewPath("").String(), "static pods do not support ephemeral containers"},
		{"name taken by a container", invalid, storedPod(), "spec.ephemeralContainers[0].name", "Duplicate value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := ephemeralWrite(t, tc.pod, tc.old)
			found := false
			for _, e := range errs {
				found = found || (e.Field == tc.wantField && strings.Contains(e.Error(), tc.want))
			}
			if !found {
				t.Errorf("errors = %v, want %s: %s", errs, tc.wantField, tc.want)
			}
		})
	}
}

// A write of the main resource still may not touch ephemeral containers.
func TestPodUpdateStillRefusesEphemeralContainers(t *testing.T) {
	old := storedPod()
	pod := old.DeepCopy()
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("dbg", "busybox")}
	res, _ := NewCatalogue().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	res.Default(pod)
	obj := PrepareForUpdate(res, "", pod, old)
	if errs := res.ValidateSubresourceChange("", obj, old); len(errs) == 0 {
		t.Error("pod update adding an ephemeral container accepted")
	}
}
