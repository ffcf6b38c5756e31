package disruption

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"
)

// sync brings the status of the budget at key up to date; when that
// fails for another reason than a conflict, it writes the fail-safe
// status (no disruptions allowed, SyncFailed) instead, and is done once
// that is written: the budget's next change syncs it again.
func (c *Controller) sync(ctx context.Context, k string) error {
	ns, name, _ := strings.Cut(k, "/")
	pdb, ok := c.pdbs.Get(ns, name)
	if !ok {
		return nil
	}
	err := c.trySync(ctx, pdb)
	if err == nil || apierrors.IsConflict(err) {
		return err
	}
	c.log.Warn("syncing a PodDisruptionBudget failed", "pdb", k, "err", err)
	return c.writeStatus(ctx, failSafe(pdb, err))
}

func (c *Controller) trySync(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	pods, err := c.podsOf(pdb)
	if err != nil {
		c.recorder.Eventf(pdb, corev1.EventTypeWarning, "NoPods", "Failed to get pods: %v", err)
		return err
	}
	if len(pods) == 0 {
		c.recorder.Eventf(pdb, corev1.EventTypeNormal, "NoPods", "No matching pods found")
	}
	expected, desired, unmanaged, err := c.expectedPodCount(ctx, pdb, pods)
	if err != nil {
		c.recorder.Eventf(pdb, corev1.EventTypeWarning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: %v", err)
		return err
	}
	if len(unmanaged) > 0 {
		c.recorder.Eventf(pdb, corev1.EventTypeWarning, "UnmanagedPods", "Pods selected by this PodDisruptionBudget (selector: %v) were found "+
			"to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. "+
			"To account for these pods please set \".spec.minAvailable\" "+
			"field of the PDB to an integer value.", pdb.Spec.Selector)
	}
	now := c.clock.Now()
	disrupted, recheckAt := DisruptedPods(pods, pdb, now, c.notDeleted)
	healthy := CountHealthyPods(pods, disrupted, now)
	next, changed := NextStatus(pdb, healthy, desired, expected, disrupted)
	if changed {
		if err := c.writeStatus(ctx, next); err != nil {
			return err
		}
	}
	if recheckAt != nil {
		c.recheck.AddAfter(key(pdb.Namespace, pdb.Name), recheckAt.Sub(now))
	}
	return nil
}

// notDeleted is the warning on a pod evicted DeletionTimeout ago and still
// not being deleted (upstream's message names the budget's namespace
// twice).
func (c *Controller) notDeleted(pod *corev1.Pod, pdb *policyv1.PodDisruptionBudget) {
	c.recorder.Eventf(pod, corev1.EventTypeWarning, "NotDeleted", "Pod was expected by PDB %s/%s to be deleted but it wasn't",
		pdb.Namespace, pdb.Namespace)
}

// podsOf are the pods of the budget's namespace its selector matches (none
// for no selector).
func (c *Controller) podsOf(pdb *policyv1.PodDisruptionBudget) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil, err
	}
	return c.pods.List(pdb.Namespace, func(p *corev1.Pod) bool { return sel.Matches(labels.Set(p.Labels)) }), nil
}

// budgetsOf are the budgets of the pod's namespace that select it (an
// empty selector selects every pod, a missing or invalid one none).
func (c *Controller) budgetsOf(pod *corev1.Pod) []*policyv1.PodDisruptionBudget {
	return c.pdbs.List(pod.Namespace, func(pdb *policyv1.PodDisruptionBudget) bool {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		return err == nil && sel.Matches(labels.Set(pod.Labels))
	})
}

// writeStatus replaces the budget's status, once: a failure is retried by
// the queue.
func (c *Controller) writeStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	_, err := c.client.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(ctx, pdb, metav1.UpdateOptions{})
	return err
}

// CountHealthyPods counts the pods that are Ready, not being deleted and
// not disrupted less than DeletionTimeout before now.
func CountHealthyPods(pods []*corev1.Pod, disrupted map[string]metav1.Time, now time.Time) int32 {
	var healthy int32
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if at, ok := disrupted[pod.Name]; ok && at.Add(DeletionTimeout).After(now) {
			continue
		}
		if podReady(pod) {
			healthy++
		}
	}
	return healthy
}

// DisruptedPods is the budget's next status.disruptedPods: the pods of its
// current list that exist and are not yet being deleted, less those whose
// DeletionTimeout has passed (each reported to notDeleted); and the
// earliest time one of those kept will time out, nil for none.
func DisruptedPods(pods []*corev1.Pod, pdb *policyv1.PodDisruptionBudget, now time.Time,
	notDeleted func(*corev1.Pod, *policyv1.PodDisruptionBudget)) (map[string]metav1.Time, *time.Time) {
	out := map[string]metav1.Time{}
	if pdb.Status.DisruptedPods == nil {
		return out, nil
	}
	var recheck *time.Time
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		at, ok := pdb.Status.DisruptedPods[pod.Name]
		if !ok {
			continue
		}
		due := at.Add(DeletionTimeout)
		if due.Before(now) {
			notDeleted(pod, pdb)
			continue
		}
		if recheck == nil || due.Before(*recheck) {
			recheck = &due
		}
		out[pod.Name] = at
	}
	return out, recheck
}

// NextStatus is the budget with its status computed from the counts, and
// whether that differs from its current status (DisruptionAllowed
// condition and observedGeneration included). No disruption is allowed
// while no pod is expected.
func NextStatus(pdb *policyv1.PodDisruptionBudget, healthy, desired, expected int32, disrupted map[string]metav1.Time) (*policyv1.PodDisruptionBudget, bool) {
	allowed := healthy - desired
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	s := pdb.Status
	if s.CurrentHealthy == healthy && s.DesiredHealthy == desired && s.ExpectedPods == expected &&
		s.DisruptionsAllowed == allowed && apiequality.Semantic.DeepEqual(s.DisruptedPods, disrupted) &&
		s.ObservedGeneration == pdb.Generation && pdbhelper.ConditionsAreUpToDate(pdb) {
		return pdb, false
	}
	next := pdb.DeepCopy()
	next.Status = policyv1.PodDisruptionBudgetStatus{
		CurrentHealthy:     healthy,
		DesiredHealthy:     desired,
		ExpectedPods:       expected,
		DisruptionsAllowed: allowed,
		DisruptedPods:      disrupted,
		ObservedGeneration: pdb.Generation,
		Conditions:         next.Status.Conditions,
	}
	pdbhelper.UpdateDisruptionAllowedCondition(next)
	return next, true
}

// failSafe is the budget allowing no disruption, its DisruptionAllowed
// condition False for SyncFailed with err's message: what the eviction
// subresource should read when the status cannot be computed.
func failSafe(pdb *policyv1.PodDisruptionBudget, err error) *policyv1.PodDisruptionBudget {
	next := pdb.DeepCopy()
	next.Status.DisruptionsAllowed = 0
	if next.Status.Conditions == nil {
		next.Status.Conditions = []metav1.Condition{}
	}
	apimeta.SetStatusCondition(&next.Status.Conditions, metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             policyv1.SyncFailedReason,
		Message:            err.Error(),
		ObservedGeneration: next.Status.ObservedGeneration,
	})
	return next
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
