package nodesim

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// schedule places one pending pod: binds it to the simulated node that
// fits it best, or marks it unschedulable with kube-scheduler's condition
// and event.
func (s *Simulator) schedule(ctx context.Context, key string) error {
	pod, states := s.snapshot(key)
	if pod == nil {
		return nil
	}
	if len(states) == 0 { // tried again when a node comes
		s.mu.Lock()
		s.unschedulable[key] = true
		s.mu.Unlock()
		return nil
	}
	best, msg := Place(pod, states)
	if best < 0 {
		return s.unschedulablePod(ctx, key, pod, msg)
	}
	return s.bind(ctx, key, pod, states[best].Node.Name)
}

// snapshot is a copy of the pending pod at key (nil unless this scheduler
// should place it) and the simulated nodes, by name, with the pods they
// run or were just given and what those take (the nodes' accounts, shared:
// the states are read only).
func (s *Simulator) snapshot(key string) (*corev1.Pod, []*NodeState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pod := s.pods[key]
	if pod == nil || pod.Spec.NodeName != "" || s.assumed[key] != "" || pod.DeletionTimestamp != nil || terminal(pod) ||
		pod.Spec.SchedulerName != DefaultSchedulerName {
		return nil, nil
	}
	if s.nodeOrder == nil {
		s.nodeOrder = slices.Sorted(maps.Keys(s.nodes))
	}
	states := make([]*NodeState, len(s.nodeOrder))
	for i, name := range s.nodeOrder {
		acc := s.accounts.of(name)
		states[i] = &NodeState{Node: s.nodes[name].node, Pods: acc.pods, Requested: acc.requested, NonZeroRequested: acc.nonZero}
	}
	return pod.DeepCopy(), states
}

// bind binds the pod to node as kube-scheduler's default binder does, and
// records the Scheduled event.
func (s *Simulator) bind(ctx context.Context, key string, pod *corev1.Pod, node string) error {
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	err := s.scheduler.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // deleted, or bound meanwhile: the watch tells
	}
	if err != nil {
		return err
	}
	s.assume(key, pod.UID, node)
	s.event(ctx, pod, corev1.EventTypeNormal, "Scheduled", "Binding",
		fmt.Sprintf("Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, node))
	return nil
}

// assume counts the pod at key, of uid, on node until storage shows it
// bound, as kube-scheduler's cache assumes a pod it binds.
func (s *Simulator) assume(key string, uid types.UID, node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pods[key]; p != nil && p.UID == uid && p.Spec.NodeName == "" {
		s.assumed[key] = node
		s.recount(key)
	}
	delete(s.unschedulable, key)
}

// unschedulablePod records that no node fits the pod: the PodScheduled
// False condition with reason Unschedulable (written when it changes) and
// a FailedScheduling event; the pod is tried again when a node changes or
// a bound pod goes.
func (s *Simulator) unschedulablePod(ctx context.Context, key string, pod *corev1.Pod, msg string) error {
	s.mu.Lock()
	s.unschedulable[key] = true
	s.mu.Unlock()
	s.event(ctx, pod, corev1.EventTypeWarning, "FailedScheduling", "Scheduling", msg)
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: msg, ObservedGeneration: pod.Generation, LastTransitionTime: metav1.Now()}
	if old := findCondition(pod.Status.Conditions, corev1.PodScheduled); old != nil {
		if old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
			return nil
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": pod.UID},
		"status":   map[string]any{"conditions": []corev1.PodCondition{cond}},
	})
	if err != nil {
		return err
	}
	_, err = s.scheduler.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// event records an events.k8s.io/v1 Event about pod as kube-scheduler's
// recorder does (reporting controller default-scheduler, instance
// default-scheduler-<hostname>). A failure is logged only.
func (s *Simulator) event(ctx context.Context, pod *corev1.Pod, typ, reason, action, note string) {
	now := time.Now()
	host, _ := os.Hostname()
	if len(note) > 1024 {
		note = note[:1024]
	}
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod.Name, now.UnixNano()), Namespace: pod.Namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: DefaultSchedulerName,
		ReportingInstance:   DefaultSchedulerName + "-" + host,
		Action:              action,
		Reason:              reason,
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			APIVersion: "v1", ResourceVersion: pod.ResourceVersion},
		Note: note,
		Type: typ,
	}
	if _, err := s.scheduler.EventsV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
		s.log.Debug("recording a scheduler event", "pod", pod.Namespace+"/"+pod.Name, "reason", reason, "err", err)
	}
}
