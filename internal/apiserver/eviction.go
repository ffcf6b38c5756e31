package apiserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// Evicting a pod, as upstream's EvictionREST
// (pkg/registry/core/pod/storage/eviction.go): a pending, terminal or
// deleting pod is deleted at once; otherwise the one PodDisruptionBudget
// that selects it must allow a disruption, which is taken from its status.
// The pod and the budget are written straight to storage, without admission,
// as upstream's storage calls are.
//
// The disruption controller (internal/controllers/disruption, when it runs)
// keeps the budget's status: until it has seen a budget's generation the
// eviction answers 429 "still being processed", as upstream's; it counts the
// pods recorded in status.disruptedPods as unhealthy until they are gone.
// Simplified: conflicts are retried a bounded number of times without
// upstream's back-off.

const (
	// maxDisruptedPodSize is upstream's MaxDisruptedPodSize.
	maxDisruptedPodSize = 2000
	evictionRetries     = 20
)

var pdbResource = schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}

func createEviction(ctx context.Context, c *subCreateCall) (runtime.Object, error) {
	ev, ok := c.obj.(*policyv1.Eviction)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Eviction object: %T", c.obj))
	}
	if ev.Name != c.name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	opts, err := propagateDryRun(ev, c.opts)
	if err != nil {
		return nil, err
	}
	if err := c.validate(ctx, ev.DeepCopy()); err != nil {
		return nil, err
	}
	return c.s.evict(ctx, c.rq.info.Namespace, ev.Name, opts)
}

// propagateDryRun puts the request's dryRun into the eviction's options.
func propagateDryRun(ev *policyv1.Eviction, opts *metav1.CreateOptions) (*metav1.DeleteOptions, error) {
	switch {
	case ev.DeleteOptions == nil:
		return &metav1.DeleteOptions{DryRun: opts.DryRun}, nil
	case len(ev.DeleteOptions.DryRun) == 0:
		ev.DeleteOptions.DryRun = opts.DryRun
		return ev.DeleteOptions, nil
	case len(opts.DryRun) == 0:
		return ev.DeleteOptions, nil
	case !reflect.DeepEqual(opts.DryRun, ev.DeleteOptions.DryRun):
		return nil, fmt.Errorf("Non-matching dry-run options in request and content: %v and %v", opts.DryRun, ev.DeleteOptions.DryRun)
	}
	return ev.DeleteOptions, nil
}

func (s *Server) evict(ctx context.Context, ns, name string, opts *metav1.DeleteOptions) (runtime.Object, error) {
	pod, deleted, err := s.evictIgnoringBudgets(ctx, ns, name, opts)
	if err != nil || deleted {
		return successOr(err)
	}
	pdbs, err := s.podDisruptionBudgets(ctx, pod)
	if err != nil {
		return nil, err
	}
	if len(pdbs) > 1 {
		return &metav1.Status{Status: metav1.StatusFailure, Code: 500,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}, nil
	}
	pinVersion := false
	if len(pdbs) == 1 {
		pdb := pdbs[0]
		if !podReady(pod) && unhealthyMayGo(pdb) {
			pinVersion = true
		} else if err := s.takeDisruption(ctx, pdb, pod.Name, len(opts.DryRun) > 0); err != nil {
			return nil, err
		}
	}
	delOpts := opts
	if pinVersion {
		delOpts = opts.DeepCopy()
		setPreconditionsResourceVersion(delOpts, pod.ResourceVersion)
	}
	err = s.deleteEvicted(ctx, pod, delOpts)
	if apierrors.IsConflict(err) && pinVersion && resourceVersionIsUnset(opts) {
		return nil, tooManyRequests(pdbs[0].Name)
	}
	return successOr(err)
}

func successOr(err error) (runtime.Object, error) {
	if err != nil {
		return nil, err
	}
	return successStatus(), nil
}

// evictIgnoringBudgets deletes the pod when no budget needs asking; it
// returns the pod it read otherwise.
func (s *Server) evictIgnoringBudgets(ctx context.Context, ns, name string, opts *metav1.DeleteOptions) (*corev1.Pod, bool, error) {
	for attempt := 0; ; attempt++ {
		pod, err := s.getPod(ctx, ns, name)
		if err != nil {
			return nil, false, err
		}
		if !canIgnorePDB(pod) {
			return pod, false, nil
		}
		delOpts := opts
		if shouldEnforceResourceVersion(pod) && resourceVersionIsUnset(opts) {
			delOpts = opts.DeepCopy()
			setPreconditionsResourceVersion(delOpts, pod.ResourceVersion)
		}
		err = s.deleteEvicted(ctx, pod, delOpts)
		if apierrors.IsConflict(err) && resourceVersionIsUnset(opts) && attempt < evictionRetries {
			continue
		}
		return pod, err == nil, err
	}
}

func (s *Server) getPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	obj, err := s.getObject(ctx, s.podResource(), ns, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

func canIgnorePDB(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

func shouldEnforceResourceVersion(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	return pod.DeletionTimestamp == nil
}

func resourceVersionIsUnset(opts *metav1.DeleteOptions) bool {
	return opts.Preconditions == nil || opts.Preconditions.ResourceVersion == nil
}

func setPreconditionsResourceVersion(opts *metav1.DeleteOptions, rv string) {
	if opts.Preconditions == nil {
		opts.Preconditions = &metav1.Preconditions{}
	}
	opts.Preconditions.ResourceVersion = &rv
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// unhealthyMayGo reports whether an unready pod may be deleted without
// taking a disruption from pdb.
func unhealthyMayGo(pdb *policyv1.PodDisruptionBudget) bool {
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
		return true
	}
	return pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0
}

func tooManyRequests(pdbName string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName)})
	return err
}

// podDisruptionBudgets returns the budgets of the pod's namespace whose
// selector matches it.
func (s *Server) podDisruptionBudgets(ctx context.Context, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	res, _ := s.cat.Lookup(policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"))
	page, err := s.store.List(ctx, layout.ListPrefix(res, pod.Namespace), storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*policyv1.PodDisruptionBudget
	for _, kv := range page.Items {
		obj, err := layout.Decode(res, kv)
		if err != nil {
			return nil, err
		}
		pdb := obj.(*policyv1.PodDisruptionBudget)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out, nil
}

// takeDisruption is upstream's checkAndDecrement, retried on conflicts.
func (s *Server) takeDisruption(ctx context.Context, pdb *policyv1.PodDisruptionBudget, podName string, dryRun bool) error {
	res, _ := s.cat.Lookup(policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"))
	key := layout.Key(res, pdb.Namespace, pdb.Name)
	for attempt := 0; ; attempt++ {
		if err := checkDisruptionAllowed(pdb); err != nil {
			return err
		}
		pdb.Status.DisruptionsAllowed--
		if pdb.Status.DisruptionsAllowed == 0 {
			apimeta.SetStatusCondition(&pdb.Status.Conditions, metav1.Condition{Type: policyv1.DisruptionAllowedCondition,
				Reason: policyv1.InsufficientPodsReason, Status: metav1.ConditionFalse, ObservedGeneration: pdb.Status.ObservedGeneration})
		}
		if dryRun {
			return nil
		}
		if pdb.Status.DisruptedPods == nil {
			pdb.Status.DisruptedPods = map[string]metav1.Time{}
		}
		pdb.Status.DisruptedPods[podName] = metav1.NewTime(s.cfg.Now())
		rev, err := parseRevision(pdb.ResourceVersion)
		if err != nil {
			return err
		}
		data, err := layout.Encode(pdb)
		if err != nil {
			return err
		}
		_, err = s.store.Update(ctx, key, data, rev)
		if !errors.Is(err, storage.ErrConflict) {
			return err
		}
		if attempt >= evictionRetries {
			return apierrors.NewTimeoutError(fmt.Sprintf("couldn't update PodDisruptionBudget %q due to conflicts", pdb.Name), 10)
		}
		obj, err := s.getObject(ctx, res, pdb.Namespace, pdb.Name)
		if err != nil {
			return err
		}
		pdb = obj.(*policyv1.PodDisruptionBudget)
	}
}

func checkDisruptionAllowed(pdb *policyv1.PodDisruptionBudget) error {
	switch {
	case pdb.Status.ObservedGeneration < pdb.Generation:
		return tooManyRequests(pdb.Name)
	case pdb.Status.DisruptionsAllowed < 0:
		return budgetForbids(pdb.Name, "pdb disruptions allowed is negative", "pdb disruptions allowed is negative")
	case len(pdb.Status.DisruptedPods) > maxDisruptedPodSize:
		return budgetForbids(pdb.Name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
			"too many pending evictions not confirmed by PDB controller")
	case pdb.Status.DisruptionsAllowed == 0:
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
			Message: noDisruptionMessage(pdb)})
		return err
	}
	return nil
}

// budgetForbids is upstream's Forbidden answer of a budget whose status
// cannot be trusted, with its cause.
func budgetForbids(pdbName, reason, cause string) error {
	err := apierrors.NewForbidden(pdbResource, pdbName, errors.New(reason))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: %s", pdbName, cause)})
	return err
}

// noDisruptionMessage says why a budget allows no disruption, as
// upstream's eviction does: the disruption controller's failure (its
// SyncFailed condition), too few healthy pods, another reason its
// DisruptionAllowed condition gives, or none.
func noDisruptionMessage(pdb *policyv1.PodDisruptionBudget) string {
	cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	explained := cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != ""
	switch {
	case explained && cond.Reason == policyv1.SyncFailedReason:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, cond.Message)
	case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
		return fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
	case explained:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, cond.Reason, cond.Message)
	}
	return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
}

// deleteEvicted is upstream's addConditionAndDeletePod: the pod gets the
// DisruptionTarget condition, then is deleted with opts; a resourceVersion
// precondition moves to the version the condition wrote.
func (s *Server) deleteEvicted(ctx context.Context, pod *corev1.Pod, opts *metav1.DeleteOptions) error {
	res := s.podResource()
	if len(opts.DryRun) == 0 {
		rv, err := s.markDisruptionTarget(ctx, pod, opts)
		if err != nil {
			return err
		}
		if !resourceVersionIsUnset(opts) {
			opts = opts.DeepCopy()
			opts.Preconditions.ResourceVersion = &rv
		}
	}
	_, _, err := s.deleteStored(ctx, res, pod.Namespace, pod.Name, opts)
	return err
}

func (s *Server) markDisruptionTarget(ctx context.Context, current *corev1.Pod, opts *metav1.DeleteOptions) (string, error) {
	res := s.podResource()
	key := layout.Key(res, current.Namespace, current.Name)
	for {
		kv, obj, err := s.readStored(ctx, res, key, current.Name)
		if err != nil {
			return "", err
		}
		pod := obj.(*corev1.Pod)
		if err := evictionPreconditions(pod, opts.Preconditions); err != nil {
			return "", err
		}
		updatePodCondition(&pod.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"}, s.cfg.Now())
		data, err := layout.Encode(pod)
		if err != nil {
			return "", err
		}
		out, err := s.store.Update(ctx, key, data, kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprint(out.ModRevision), nil
	}
}

// evictionPreconditions are the checks of upstream's getLatestPod, with its
// wording.
func evictionPreconditions(pod *corev1.Pod, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	gr := schema.GroupResource{Resource: "Pod"}
	if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
		return apierrors.NewConflict(gr, pod.Name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, pod.UID))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
		return apierrors.NewConflict(gr, pod.Name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, pod.ResourceVersion))
	}
	return nil
}
