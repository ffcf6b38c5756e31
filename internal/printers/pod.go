package printers

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

var podColumns = []metav1.TableColumnDefinition{
	nameColumn,
	str("Ready", "The aggregate readiness state of this pod for accepting traffic."),
	str("Status", "The aggregate status of the containers in this pod."),
	str("Restarts", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
	ageColumn,
	wide(str("IP", corev1.PodStatus{}.SwaggerDoc()["podIP"])),
	wide(str("Node", corev1.PodSpec{}.SwaggerDoc()["nodeName"])),
	wide(str("Nominated Node", corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"])),
	wide(str("Readiness Gates", corev1.PodSpec{}.SwaggerDoc()["readinessGates"])),
}

// Row conditions of finished pods, as upstream sets them.
var (
	podSucceededConditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	podFailedConditions    = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
)

var podPrinter = kindRow(podColumns, printPod)

// nodeLostReason is the status reason the node lifecycle controller gives pods
// of an unreachable node.
const nodeLostReason = "NodeLost"

func printPod(pod *corev1.Pod, now time.Time) metav1.TableRow {
	s := summarizePod(pod)
	restarts := strconv.Itoa(s.restarts)
	if s.restarts != 0 && !s.lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", s.restarts, duration.HumanDuration(now.Sub(s.lastRestart)))
	}
	row := metav1.TableRow{Cells: []any{
		pod.Name, fmt.Sprintf("%d/%d", s.ready, s.total), s.reason, restarts, since(pod.CreationTimestamp, now),
		orNone(podIP(pod)), orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), readinessGates(pod),
	}}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		row.Conditions = podSucceededConditions
	case corev1.PodFailed:
		row.Conditions = podFailedConditions
	}
	return row
}

// podSummary is what the READY, STATUS and RESTARTS cells are made of.
type podSummary struct {
	ready, total int
	reason       string
	restarts     int
	lastRestart  time.Time
}

// summarizePod derives a pod's status the way upstream's printer does: the
// phase (or status reason), refined by the first init container still at work
// or else by the containers' states, then Terminating while being deleted.
func summarizePod(pod *corev1.Pod) podSummary {
	s := podSummary{total: len(pod.Spec.Containers), reason: string(pod.Status.Phase)}
	if pod.Status.Reason != "" {
		s.reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			s.reason = corev1.PodReasonSchedulingGated
		}
	}
	sidecar := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		sidecar[c.Name] = c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if sidecar[c.Name] {
			s.total++
		}
	}
	initializing, sidecarRestarts, sidecarLast := s.addInitContainers(pod, sidecar)
	if !initializing || hasCondition(pod.Status.Conditions, corev1.PodInitialized) {
		s.restarts, s.lastRestart = sidecarRestarts, sidecarLast
		s.addContainers(pod)
	}
	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == nodeLostReason:
		s.reason = "Unknown"
	case pod.DeletionTimestamp != nil && !terminal:
		s.reason = "Terminating"
	}
	return s
}

// addInitContainers walks init container statuses up to the first one still
// initializing the pod, which sets the reason. It reports whether there is
// one, and the restarts of restartable (sidecar) init containers seen.
func (s *podSummary) addInitContainers(pod *corev1.Pod, sidecar map[string]bool) (initializing bool, restarts int, last time.Time) {
	for i, c := range pod.Status.InitContainerStatuses {
		s.restarts += int(c.RestartCount)
		s.lastRestart = laterTermination(s.lastRestart, c)
		if sidecar[c.Name] {
			restarts += int(c.RestartCount)
			last = laterTermination(last, c)
		}
		term := c.State.Terminated
		switch {
		case term != nil && term.ExitCode == 0:
			continue
		case sidecar[c.Name] && c.Started != nil && *c.Started:
			if c.Ready {
				s.ready++
			}
			continue
		case term != nil && term.Reason != "":
			s.reason = "Init:" + term.Reason
		case term != nil && term.Signal != 0:
			s.reason = fmt.Sprintf("Init:Signal:%d", term.Signal)
		case term != nil:
			s.reason = fmt.Sprintf("Init:ExitCode:%d", term.ExitCode)
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			s.reason = "Init:" + c.State.Waiting.Reason
		default:
			s.reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		return true, restarts, last
	}
	return false, restarts, last
}

// addContainers counts ready containers and restarts; the first container
// (in spec order) that is waiting or terminated gives the reason.
func (s *podSummary) addContainers(pod *corev1.Pod) {
	running := false
	for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
		c := pod.Status.ContainerStatuses[i]
		s.restarts += int(c.RestartCount)
		s.lastRestart = laterTermination(s.lastRestart, c)
		term := c.State.Terminated
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			s.reason = c.State.Waiting.Reason
		case term != nil && term.Reason != "":
			s.reason = term.Reason
		case term != nil && term.Signal != 0:
			s.reason = fmt.Sprintf("Signal:%d", term.Signal)
		case term != nil:
			s.reason = fmt.Sprintf("ExitCode:%d", term.ExitCode)
		case c.Ready && c.State.Running != nil:
			running = true
			s.ready++
		}
	}
	// A pod whose other containers still run is not Completed.
	if s.reason == "Completed" && running {
		s.reason = "NotReady"
		if hasCondition(pod.Status.Conditions, corev1.PodReady) {
			s.reason = "Running"
		}
	}
}

// laterTermination is the later of t and when c last terminated.
func laterTermination(t time.Time, c corev1.ContainerStatus) time.Time {
	if term := c.LastTerminationState.Terminated; term != nil && t.Before(term.FinishedAt.Time) {
		return term.FinishedAt.Time
	}
	return t
}

// hasCondition reports whether the pod condition of type t is True.
func hasCondition(conds []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, c := range conds {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// podIP is the first of podIPs (upstream's internal type has no podIP).
func podIP(pod *corev1.Pod) string {
	if len(pod.Status.PodIPs) > 0 {
		return pod.Status.PodIPs[0].IP
	}
	return ""
}

// readinessGates is "<true>/<gates>", or "<none>" without gates.
func readinessGates(pod *corev1.Pod) string {
	if len(pod.Spec.ReadinessGates) == 0 {
		return "<none>"
	}
	ready := 0
	for _, g := range pod.Spec.ReadinessGates {
		for _, c := range pod.Status.Conditions {
			if c.Type == g.ConditionType {
				if c.Status == corev1.ConditionTrue {
					ready++
				}
				break
			}
		}
	}
	return fmt.Sprintf("%d/%d", ready, len(pod.Spec.ReadinessGates))
}
