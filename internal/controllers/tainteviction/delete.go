package tainteviction

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// The DisruptionTarget condition a pod gets before it is deleted, and the
// reason of the controller's events.
const (
	ReasonDeletionByTaintManager = "DeletionByTaintManager"
	disruptionMessage            = "Taint manager: deleting due to NoExecute taint"
	EventReason                  = "TaintManagerEviction"
)

// Tries at a deletion, and the pause between them, as upstream's.
const (
	deleteAttempts = 5
	retryPause     = 10 * time.Millisecond
)

// processNextDeletion runs the next deletion due; false once the queue is
// shut down.
func (c *Controller) processNextDeletion(ctx context.Context) bool {
	f, quit := c.deletions.queue.Get()
	if quit {
		return false
	}
	defer c.deletions.queue.Done(f)
	if ctx.Err() != nil || !c.deletions.due(f) {
		return true
	}
	defer c.deletions.done(f)
	namespace, name, _ := strings.Cut(f.pod, "/")
	c.log.Info("deleting pod", "pod", f.pod)
	c.event(namespace, name, "Marking for deletion Pod %s/%s")
	if err := c.deletePod(ctx, namespace, name, f.fireAt); err != nil {
		c.log.Warn("deleting pod failed", "pod", f.pod, "err", err)
	}
	return true
}

// deletePod marks and deletes the pod, trying a few times; a successful
// deletion is counted, with its delay after fireAt.
func (c *Controller) deletePod(ctx context.Context, namespace, name string, fireAt time.Time) error {
	var err error
	for range deleteAttempts {
		if err = c.markAndDelete(ctx, namespace, name); err == nil {
			c.metrics.deleted(c.clock.Since(fireAt))
			return nil
		}
		if apierrors.IsNotFound(err) {
			return err // gone: trying again would not find it either
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(retryPause):
		}
	}
	return err
}

// markAndDelete reads the pod from the server, gives it the
// DisruptionTarget condition unless it has it as set here, and deletes it
// with default options.
func (c *Controller) markAndDelete(ctx context.Context, namespace, name string) error {
	pods := c.client.CoreV1().Pods(namespace)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	status := pod.Status.DeepCopy()
	if setCondition(status, disruptionCondition(pod), c.clock.Now()) {
		patch, err := statusPatch(pod, *status)
		if err != nil {
			return err
		}
		if _, err := pods.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			return fmt.Errorf("patching the status of pod %s/%s: %w", namespace, name, err)
		}
	}
	return pods.Delete(ctx, name, metav1.DeleteOptions{})
}

// disruptionCondition is the DisruptionTarget condition of a pod deleted
// for its node's taints, observed at its generation.
func disruptionCondition(pod *corev1.Pod) corev1.PodCondition {
	return corev1.PodCondition{Type: corev1.DisruptionTarget, ObservedGeneration: pod.Generation,
		Status: corev1.ConditionTrue, Reason: ReasonDeletionByTaintManager, Message: disruptionMessage}
}

// setCondition puts cond into status as the kubelet and upstream's
// controllers set pod conditions: its transition time is now unless the
// condition had its status already (then the old time is kept). It
// reports whether the status, reason, message or times changed; a
// difference in observedGeneration alone is not a change.
func setCondition(status *corev1.PodStatus, cond corev1.PodCondition, now time.Time) bool {
	cond.LastTransitionTime = metav1.NewTime(now)
	for i := range status.Conditions {
		old := status.Conditions[i]
		if old.Type != cond.Type {
			continue
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		status.Conditions[i] = cond
		return old.Status != cond.Status || old.Reason != cond.Reason || old.Message != cond.Message ||
			!old.LastProbeTime.Equal(&cond.LastProbeTime) || !old.LastTransitionTime.Equal(&cond.LastTransitionTime)
	}
	status.Conditions = append(status.Conditions, cond)
	return true
}

// statusPatch is the strategic merge patch from the pod's status to
// status, with the pod's uid as a precondition.
func statusPatch(pod *corev1.Pod, status corev1.PodStatus) ([]byte, error) {
	before, err := json.Marshal(corev1.Pod{Status: pod.Status})
	if err != nil {
		return nil, err
	}
	after, err := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: pod.UID}, Status: status})
	if err != nil {
		return nil, err
	}
	return strategicpatch.CreateTwoWayMergePatch(before, after, corev1.Pod{})
}

// event records a Normal TaintManagerEviction event on the pod, its
// message format taking the namespace and name.
func (c *Controller) event(namespace, name, format string) {
	if c.recorder == nil {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Name: name}
	c.recorder.Eventf(ref, corev1.EventTypeNormal, EventReason, format, namespace, name)
}
