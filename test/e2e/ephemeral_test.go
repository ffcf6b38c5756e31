package e2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TestKubectlDebugAddsEphemeralContainer runs kubectl debug, which patches
// pods/ephemeralcontainers; with no kubelet the container never runs, so
// the test checks the pod spec. Further writes through the subresource may
// add ephemeral containers (JSON patch) but not change existing ones.
func TestKubectlDebugAddsEphemeralContainer(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--storage", "memory")
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	pods := cs.CoreV1().Pods("default")
	_, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.MustKubectl(t, "", "debug", "web", "-n", "default", "--image=busybox", "-c", "dbg", "--attach=false")
	out := a.MustKubectl(t, "", "get", "pod", "web", "-n", "default", "-o", "jsonpath={.spec.ephemeralContainers[*].name} {.spec.ephemeralContainers[*].image} {.spec.containers[0].image}")
	if out != "dbg busybox nginx" {
		t.Errorf("pod after kubectl debug: %q, want %q", out, "dbg busybox nginx")
	}

	add := `[{"op":"add","path":"/spec/ephemeralContainers/-","value":{"name":"dbg2","image":"busybox"}},` +
		`{"op":"replace","path":"/spec/containers/0/image","value":"ignored"}]`
	pod, err := pods.Patch(ctx, "web", types.JSONPatchType, []byte(add), metav1.PatchOptions{}, "ephemeralcontainers")
	if err != nil {
		t.Fatalf("JSON patch adding an ephemeral container: %v", err)
	}
	if n := len(pod.Spec.EphemeralContainers); n != 2 || pod.Spec.Containers[0].Image != "nginx" {
		t.Errorf("after JSON patch: %d ephemeral containers, image %q; want 2, nginx", n, pod.Spec.Containers[0].Image)
	}
	change := `[{"op":"replace","path":"/spec/ephemeralContainers/0/image","value":"alpine"}]`
	_, err = pods.Patch(ctx, "web", types.JSONPatchType, []byte(change), metav1.PatchOptions{}, "ephemeralcontainers")
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `existing ephemeral containers "dbg" may not be changed`) {
		t.Errorf("changing an ephemeral container: %v, want 422 may not be changed", err)
	}
}
