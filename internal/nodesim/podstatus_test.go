package nodesim

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func conditionsString(conds []corev1.PodCondition) string {
	var out []string
	for _, c := range conds {
		s := string(c.Type) + "=" + string(c.Status)
		if c.Reason != "" {
			s += " " + c.Reason
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// A running pod's status is the kubelet's: conditions owned by others
// first, then the kubelet's in its order; init containers completed,
// sidecars and containers running.
func TestRunningStatus(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := testPod(func(p *corev1.Pod) {
		p.Generation = 3
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}, {Name: "sidecar", Image: "envoy", RestartPolicy: &always}}
		p.Status.Conditions = []corev1.PodCondition{{Type: "example.com/gate", Status: corev1.ConditionTrue},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Unix(100, 0))}}
	})
	now := metav1.NewTime(time.Unix(200, 0))
	s := runningStatus(pod, "192.0.2.1", "10.244.0.2", now)
	want := "example.com/gate=True, PodReadyToStartContainers=True, Initialized=True, Ready=True, ContainersReady=True, PodScheduled=True"
	if got := conditionsString(s.Conditions); got != want {
		t.Errorf("conditions = %s, want %s", got, want)
	}
	if got := s.Conditions[5].LastTransitionTime; !got.Equal(&metav1.Time{Time: time.Unix(100, 0)}) {
		t.Errorf("PodScheduled lastTransitionTime = %v, want kept", got)
	}
	for _, c := range s.Conditions[1:] {
		if c.ObservedGeneration != 3 {
			t.Errorf("%s observedGeneration = %d, want 3", c.Type, c.ObservedGeneration)
		}
	}
	if s.Phase != corev1.PodRunning || s.PodIP != "10.244.0.2" || s.HostIPs[0].IP != "192.0.2.1" || s.ObservedGeneration != 3 {
		t.Errorf("status %+v", s)
	}
	if ic := s.InitContainerStatuses; len(ic) != 2 || ic[0].State.Terminated == nil || ic[0].State.Terminated.Reason != "Completed" || ic[1].State.Running == nil || !ic[1].Ready {
		t.Errorf("initContainerStatuses = %+v", ic)
	}
}

// A pod whose readiness gate is not True is running but not Ready.
func TestRunningStatusReadinessGate(t *testing.T) {
	pod := testPod(func(p *corev1.Pod) {
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}}
	})
	s := runningStatus(pod, "192.0.2.1", "10.244.0.2", metav1.Now())
	want := "PodReadyToStartContainers=True, Initialized=True, Ready=False ReadinessGatesNotReady, ContainersReady=True, PodScheduled=True"
	if got := conditionsString(s.Conditions); got != want {
		t.Errorf("conditions = %s, want %s", got, want)
	}
	if msg := s.Conditions[2].Message; msg != `corresponding condition of pod readiness gate "example.com/lb" does not exist.` {
		t.Errorf("Ready message = %q", msg)
	}
}

// A completed pod has the kubelet's conditions for a terminal pod and its
// containers terminated as Completed.
func TestSucceededStatus(t *testing.T) {
	pod := testPod()
	pod.Status = runningStatus(pod, "192.0.2.1", "10.244.0.2", metav1.NewTime(time.Unix(100, 0)))
	s := finishedStatus(pod, corev1.PodSucceeded, metav1.NewTime(time.Unix(200, 0)))
	want := "PodReadyToStartContainers=False PodSandboxNotReady, Initialized=True PodCompleted, Ready=False PodCompleted, ContainersReady=False PodCompleted, PodScheduled=True"
	if got := conditionsString(s.Conditions); got != want {
		t.Errorf("conditions = %s, want %s", got, want)
	}
	term := s.ContainerStatuses[0].State.Terminated
	if s.Phase != corev1.PodSucceeded || term == nil || term.ExitCode != 0 || term.Reason != "Completed" || term.StartedAt.Unix() != 100 || term.FinishedAt.Unix() != 200 {
		t.Errorf("phase %s, terminated %+v", s.Phase, term)
	}
}

func TestPodRunTime(t *testing.T) {
	job := testPod(func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "u", Controller: ptrTo(true)}}
	})
	annotated := testPod(func(p *corev1.Pod) { p.Annotations = map[string]string{AnnotationPodComplete: "5m"} })
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want time.Duration
		ok   bool
	}{
		{"bare", testPod(), 0, false},
		{"job's", job, time.Second, true},
		{"annotated", annotated, 5 * time.Minute, true},
	} {
		if got, ok := podRunTime(tc.pod); got != tc.want || ok != tc.ok {
			t.Errorf("podRunTime(%s) = %v, %v, want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// A pod killed at the end of its grace period has failed: exit 137, Error.
func TestFailedStatus(t *testing.T) {
	pod := testPod()
	pod.Status = runningStatus(pod, "192.0.2.1", "10.244.0.2", metav1.NewTime(time.Unix(100, 0)))
	s := finishedStatus(pod, corev1.PodFailed, metav1.NewTime(time.Unix(200, 0)))
	want := "PodReadyToStartContainers=False PodSandboxNotReady, Initialized=True, Ready=False PodFailed, ContainersReady=False PodFailed, PodScheduled=True"
	if got := conditionsString(s.Conditions); got != want {
		t.Errorf("conditions = %s, want %s", got, want)
	}
	term := s.ContainerStatuses[0].State.Terminated
	if s.Phase != corev1.PodFailed || term == nil || term.ExitCode != 137 || term.Reason != "Error" {
		t.Errorf("phase %s, terminated %+v", s.Phase, term)
	}
}
