package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// admitd serve runs the ephemeral volume controller as its service
// account, which the bootstrap RBAC policy lets create the claim, through
// admission; --controllers=-ephemeral-volume-controller turns it off.
func TestEphemeralVolumeClaimCreated(t *testing.T) {
	for _, on := range []bool{true, false} {
		flag := []string{"*"}
		if !on {
			flag = []string{"*", "-ephemeral-volume-controller"}
		}
		c := startWithControllers(t, flag...)
		readyNamespace(t, c, "eph", nil)
		tmpl := &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "eph"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "i"}},
			Volumes:    []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: tmpl}}}}}}
		if _, err := c.CoreV1().Pods("eph").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if !on {
			time.Sleep(time.Second) // what the controller would have had to create it
			claims, err := c.CoreV1().PersistentVolumeClaims("eph").List(t.Context(), metav1.ListOptions{})
			if err != nil || len(claims.Items) != 0 {
				t.Fatalf("with the controller off: claims %v, %v", claims, err)
			}
			if body := scrapeClient(t, c); strings.Contains(body, "ephemeral_volume_controller_") {
				t.Error("the controller's counters are served while it is off")
			}
			continue
		}
		eventually(t, "the claim p-v", func() (bool, string) {
			claim, err := c.CoreV1().PersistentVolumeClaims("eph").Get(t.Context(), "p-v", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return claim.OwnerReferences[0].Name == "p" && claim.ManagedFields[0].Manager == "kube-controller-manager", "owned by the pod, written by kube-controller-manager"
		})
		eventually(t, "one create counted", func() (bool, string) {
			body := scrapeClient(t, c)
			creates, failures := counterValue(body, "ephemeral_volume_controller_create_total"), counterValue(body, "ephemeral_volume_controller_create_failures_total")
			return creates == 1 && failures == 0, fmt.Sprintf("1 create and 0 failures, got %v and %v", creates, failures)
		})
		// a claim of pod q's claim's name that q does not own is left
		// alone: an event on q, and no create asked
		foreign := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "q-v", Namespace: "eph"}, Spec: tmpl.Spec}
		if _, err := c.CoreV1().PersistentVolumeClaims("eph").Create(t.Context(), foreign, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createPodNamed(t, c, pod, "q", "")
		eventually(t, "the event on pod q", func() (bool, string) {
			events, err := c.CoreV1().Events("eph").List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=q"})
			if err != nil || len(events.Items) == 0 {
				return false, fmt.Sprint(events, err)
			}
			e := events.Items[0]
			return e.Reason == "FailedBinding" && strings.Contains(e.Message, "was not created for pod eph/q (pod is not owner)"), e.Reason + ": " + e.Message
		})
		body := scrapeClient(t, c)
		if creates, failures := counterValue(body, "ephemeral_volume_controller_create_total"), counterValue(body, "ephemeral_volume_controller_create_failures_total"); creates != 1 || failures != 0 {
			t.Errorf("after a foreign claim: %v creates, %v failures; want 1 and 0", creates, failures)
		}
		// a create the API server refuses (LimitRanger: more storage than
		// the namespace's claims may ask) counts as asked and failed
		limits := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "claims", Namespace: "eph"}, Spec: corev1.LimitRangeSpec{
			Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypePersistentVolumeClaim, Max: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}}}}}
		if _, err := c.CoreV1().LimitRanges("eph").Create(t.Context(), limits, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createPodNamed(t, c, pod, "r", "5Gi")
		// the refused create is retried: at least one more of each
		eventually(t, "the refused create counted", func() (bool, string) {
			body := scrapeClient(t, c)
			creates, failures := counterValue(body, "ephemeral_volume_controller_create_total"), counterValue(body, "ephemeral_volume_controller_create_failures_total")
			return failures >= 1 && creates == failures+1, fmt.Sprintf("creates = failures + 1 >= 2, got %v and %v", creates, failures)
		})
	}
}

// counterValue is the value of the unlabelled series name in body (-1:
// absent).
func counterValue(body, name string) float64 {
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f
			}
		}
	}
	return -1
}

// scrapeClient reads /metrics through c.
func scrapeClient(t *testing.T, c kubernetes.Interface) string {
	t.Helper()
	body, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	return string(body)
}

// createPodNamed creates a copy of pod named name, its ephemeral claim
// asking for storage when that is not empty.
func createPodNamed(t *testing.T, c kubernetes.Interface, pod *corev1.Pod, name, storage string) {
	t.Helper()
	p := pod.DeepCopy()
	p.Name = name
	if storage != "" {
		p.Spec.Volumes[0].Ephemeral.VolumeClaimTemplate.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(storage)
	}
	if _, err := c.CoreV1().Pods("eph").Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
