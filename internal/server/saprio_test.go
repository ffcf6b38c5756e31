package server

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A new namespace gets kube-root-ca.crt with the server's CA (written by
// the publisher as its own user, which RBAC must allow), and a pod created
// in it right away gets the default service account, its token volume and
// the default priority.
func TestNamespaceCAAndPodTokenVolume(t *testing.T) {
	s, admin := startRBAC(t)
	cs := kubernetes.NewForConfigOrDie(admin)
	mustCreateNamespace(t, cs, "team")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}
	got, err := cs.CoreV1().Pods("team").Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a pod in a new namespace: %v", err)
	}
	if got.Spec.ServiceAccountName != "default" || len(got.Spec.Volumes) != 1 {
		t.Fatalf("pod has account %q and volumes %v, want default and the token volume", got.Spec.ServiceAccountName, got.Spec.Volumes)
	}
	vol := got.Spec.Volumes[0]
	if !strings.HasPrefix(vol.Name, "kube-api-access-") || vol.Projected == nil || len(vol.Projected.Sources) != 3 ||
		vol.Projected.Sources[1].ConfigMap == nil || vol.Projected.Sources[1].ConfigMap.Name != "kube-root-ca.crt" {
		t.Errorf("token volume = %+v", vol)
	}
	mounts := got.Spec.Containers[0].VolumeMounts
	if len(mounts) != 1 || mounts[0].Name != vol.Name || mounts[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" || !mounts[0].ReadOnly {
		t.Errorf("container mounts = %+v", mounts)
	}
	if got.Spec.Priority == nil || *got.Spec.Priority != 0 || got.Spec.PreemptionPolicy == nil || *got.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("priority %v, preemption policy %v; want 0 and PreemptLowerPriority", got.Spec.Priority, got.Spec.PreemptionPolicy)
	}

	deadline := time.Now().Add(5 * time.Second)
	for {
		cm, err := cs.CoreV1().ConfigMaps("team").Get(t.Context(), "kube-root-ca.crt", metav1.GetOptions{})
		if err == nil {
			if cm.Data["ca.crt"] != string(s.CAPEM) || cm.Annotations["kubernetes.io/description"] == "" {
				t.Fatalf("kube-root-ca.crt = %v %v, want the server's CA and the description", cm.Data, cm.Annotations)
			}
			break
		}
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			t.Fatalf("kube-root-ca.crt of a new namespace: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The system PriorityClasses exist from the start and resolve; only one
// class may be the global default.
func TestSystemPriorityClasses(t *testing.T) {
	_, admin := startRBAC(t)
	cs := kubernetes.NewForConfigOrDie(admin)
	for name, value := range map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000} {
		pc, err := cs.SchedulingV1().PriorityClasses().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pc.Value != value || pc.GlobalDefault || pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptLowerPriority {
			t.Errorf("%s = value %d, globalDefault %v, policy %v", name, pc.Value, pc.GlobalDefault, pc.PreemptionPolicy)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "critical"},
		Spec: corev1.PodSpec{PriorityClassName: "system-node-critical", Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}
	got, err := cs.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Priority != 2000001000 {
		t.Errorf("priority %d, want 2000001000", *got.Spec.Priority)
	}
	def := func(name string) *schedulingv1.PriorityClass {
		return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: 10, GlobalDefault: true}
	}
	if _, err := cs.SchedulingV1().PriorityClasses().Create(t.Context(), def("first"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = cs.SchedulingV1().PriorityClasses().Create(t.Context(), def("second"), metav1.CreateOptions{})
	want := `priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first is already marked as default. Only one default can exist`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("second default = %v, want %q", err, want)
	}
}
