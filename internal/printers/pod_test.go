package printers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var podHeader = []string{"Name", "Ready", "Status", "Restarts", "Age", "+IP", "+Node", "+Nominated Node", "+Readiness Gates"}

func pod(name string, containers int, status corev1.PodStatus) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: objMeta(name), Spec: corev1.PodSpec{Containers: make([]corev1.Container, containers)}, Status: status}
}

func running(ready bool, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Ready: ready, RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func waiting(reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
}

func terminated(reason string, exit, signal int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: exit, Signal: signal}}}
}

func lastTerminated(c corev1.ContainerStatus, d time.Duration) corev1.ContainerStatus {
	c.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{FinishedAt: ago(d)}
	return c
}

func deleting(p *corev1.Pod) *corev1.Pod {
	t := ago(time.Second)
	p.DeletionTimestamp = &t
	return p
}

// noWide are the wide cells of a pod that is neither scheduled nor gated.
var noWide = []any{"<none>", "<none>", "<none>", "<none>"}

func podCells(name, ready, status, restarts string) []any {
	return append([]any{name, ready, status, restarts, "5m"}, noWide...)
}

// TestPodTable mirrors upstream's TestPrintPod and
// TestPrintPodWithRestartableInitContainer (pkg/printers/internalversion).
func TestPodTable(t *testing.T) {
	res := lookup(t, "", "v1", "pods")
	pending := pod("web", 1, corev1.PodStatus{Phase: corev1.PodPending})
	checkKind(t, res, podHeader, []cellCase{
		{name: "just created", obj: pending, cells: podCells("web", "0/1", "Pending", "0")},
		{name: "container creating", obj: pod("web", 1, corev1.PodStatus{Phase: corev1.PodPending,
			ContainerStatuses: []corev1.ContainerStatus{waiting("ContainerCreating")}}),
			cells: podCells("web", "0/1", "ContainerCreating", "0")},
		{name: "status reason wins over phase", obj: pod("web", 1, corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}),
			cells: podCells("web", "0/1", "Evicted", "0"), conditions: podFailedConditions},
		{name: "running with restarts", obj: pod("web", 2, corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{running(true, 3), lastTerminated(running(true, 6), 5*24*time.Hour)}}),
			cells: podCells("web", "2/2", "Running", "9 (5d ago)")},
		{name: "completed beside a running container, not ready", obj: pod("web", 2, corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{terminated("Completed", 0, 0), running(true, 0)}}),
			cells: podCells("web", "1/2", "NotReady", "0")},
		{name: "completed beside a running container, ready", obj: pod("web", 2, corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{terminated("Completed", 0, 0), running(true, 0)}}),
			cells: podCells("web", "1/2", "Running", "0")},
		{name: "terminated without reason", obj: pod("web", 2, corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{terminated("", 2, 0), terminated("", 0, 9)}}),
			cells: podCells("web", "0/2", "ExitCode:2", "0")},
		{name: "crash loop", obj: pod("web", 1, corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{lastTerminated(corev1.ContainerStatus{RestartCount: 4,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}, 20*time.Second)}}),
			cells: podCells("web", "0/1", "CrashLoopBackOff", "4 (20s ago)")},
		{name: "succeeded", obj: pod("web", 1, corev1.PodStatus{Phase: corev1.PodSucceeded,
			ContainerStatuses: []corev1.ContainerStatus{terminated("Completed", 0, 0)}}),
			cells: podCells("web", "0/1", "Completed", "0"), conditions: podSucceededConditions},
		{name: "scheduling gated", obj: pod("web", 2, corev1.PodStatus{Phase: corev1.PodPending,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}}),
			cells: podCells("web", "0/2", "SchedulingGated", "0")},
		{name: "terminating", obj: deleting(pod("web", 1, corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{running(false, 0)}})),
			cells: podCells("web", "0/1", "Terminating", "0")},
		{name: "terminating while pending", obj: deleting(pod("web", 1, corev1.PodStatus{Phase: corev1.PodPending})),
			cells: podCells("web", "0/1", "Terminating", "0")},
		{name: "deleted after success", obj: deleting(pod("web", 1, corev1.PodStatus{Phase: corev1.PodSucceeded,
			ContainerStatuses: []corev1.ContainerStatus{terminated("Completed", 0, 0)}})),
			cells: podCells("web", "0/1", "Completed", "0"), conditions: podSucceededConditions},
		{name: "node lost", obj: deleting(pod("web", 1, corev1.PodStatus{Phase: corev1.PodRunning, Reason: "NodeLost"})),
			cells: podCells("web", "0/1", "Unknown", "0")},
	})
}

func TestPodInitContainers(t *testing.T) {
	res := lookup(t, "", "v1", "pods")
	withInit := func(n int, status corev1.PodStatus) *corev1.Pod {
		p := pod("web", 1, status)
		p.Spec.InitContainers = make([]corev1.Container, n)
		return p
	}
	sidecars := func(status corev1.PodStatus) *corev1.Pod {
		p := pod("web", 1, status)
		p.Spec.InitContainers = []corev1.Container{
			{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
			{Name: "log", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
		}
		return p
	}
	started := func(name string, ready bool) corev1.ContainerStatus {
		c := running(ready, 0)
		c.Name, c.Started = name, ptr.To(true)
		return c
	}
	checkKind(t, res, podHeader, []cellCase{
		{name: "first init container restarting", obj: withInit(2, corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{lastTerminated(running(false, 3), 10*time.Second), waiting("")},
			ContainerStatuses:     []corev1.ContainerStatus{waiting("")}}),
			cells: podCells("web", "0/1", "Init:0/2", "3 (10s ago)")},
		{name: "second init container at work", obj: withInit(2, corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{terminated("", 0, 0), running(false, 0)}}),
			cells: podCells("web", "0/1", "Init:1/2", "0")},
		{name: "init container failed", obj: withInit(1, corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{terminated("Error", 1, 0)}}),
			cells: podCells("web", "0/1", "Init:Error", "0")},
		{name: "init container killed", obj: withInit(1, corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{terminated("", 137, 9)}}),
			cells: podCells("web", "0/1", "Init:Signal:9", "0")},
		{name: "init container image pull", obj: withInit(1, corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{waiting("ImagePullBackOff")}}),
			cells: podCells("web", "0/1", "Init:ImagePullBackOff", "0")},
		{name: "sidecars started, main container running", obj: sidecars(corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions:            []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}},
			InitContainerStatuses: []corev1.ContainerStatus{started("proxy", true), started("log", false)},
			ContainerStatuses:     []corev1.ContainerStatus{running(true, 0)}}),
			cells: podCells("web", "2/3", "Running", "0")},
	})
}

// TestPodWide mirrors upstream's TestPrintPodwide.
func TestPodWide(t *testing.T) {
	res := lookup(t, "", "v1", "pods")
	scheduled := pod("web", 1, corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.1.1.3"}, {IP: "fd00::3"}},
		NominatedNodeName: "node2",
		Conditions:        []corev1.PodCondition{{Type: "condition1", Status: corev1.ConditionFalse}, {Type: "condition2", Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{running(true, 0)}})
	scheduled.Spec.NodeName = "node1"
	scheduled.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "condition1"}, {ConditionType: "condition2"}, {ConditionType: "condition3"}}
	legacyIP := pod("web", 1, corev1.PodStatus{Phase: corev1.PodPending, PodIP: "10.1.1.4"})
	checkKind(t, res, podHeader, []cellCase{
		{name: "scheduled with gates", obj: scheduled, cells: []any{"web", "1/1", "Running", "0", "5m", "10.1.1.3", "node1", "node2", "1/3"}},
		// upstream's printer reads podIPs only (test/upstream/printercolumns)
		{name: "podIP only", obj: legacyIP, cells: []any{"web", "0/1", "Pending", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{name: "no creation time", obj: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}},
			cells: []any{"web", "0/0", "", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"}},
	})
}
