package job

import (
	"context"
	"encoding/json"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// podsForJob returns the pods j controls, after adopting the orphans its
// selector matches (with the tracking finalizer) and releasing those it no
// longer matches (upstream's PodControllerRefManager). The pods are the
// cache's; an adopted one is returned as a copy with the finalizer.
func (c *Controller) podsForJob(ctx context.Context, j *batchv1.Job) ([]*corev1.Pod, error) {
	selector, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("couldn't convert Job selector: %v", err)
	}
	candidates := c.pods.List(j.Namespace, func(p *corev1.Pod) bool {
		ref := metav1.GetControllerOfNoCopy(p)
		return ref == nil || ref.UID == j.UID
	})
	var claimed []*corev1.Pod
	var errs []error
	var canAdopt *error
	for _, p := range candidates {
		ref := metav1.GetControllerOfNoCopy(p)
		matches := selector.Matches(labels.Set(p.Labels))
		switch {
		case ref != nil && matches:
			claimed = append(claimed, p)
		case ref != nil:
			if j.DeletionTimestamp == nil {
				if err := c.releasePod(ctx, j, p); err != nil {
					errs = append(errs, err)
				}
			}
		case j.DeletionTimestamp != nil || !matches || p.DeletionTimestamp != nil:
		default:
			if canAdopt == nil {
				err := c.recheckNotDeleted(ctx, j)
				canAdopt = &err
			}
			if *canAdopt != nil {
				errs = append(errs, fmt.Errorf("can't adopt Pod %v/%v (%v): %v", p.Namespace, p.Name, p.UID, *canAdopt))
				continue
			}
			if err := c.adoptPod(ctx, j, p); err != nil {
				if !apierrors.IsNotFound(err) {
					errs = append(errs, err)
				}
				continue
			}
			if !hasTrackingFinalizer(p) {
				p = p.DeepCopy()
				p.Finalizers = append(p.Finalizers, batchv1.JobTrackingFinalizer)
			}
			claimed = append(claimed, p)
		}
	}
	return claimed, utilerrors.NewAggregate(errs)
}

func (c *Controller) recheckNotDeleted(ctx context.Context, j *batchv1.Job) error {
	fresh, err := c.client.BatchV1().Jobs(j.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("can't recheck DeletionTimestamp: %v", err)
	}
	if fresh.UID != j.UID {
		return fmt.Errorf("can't recheck DeletionTimestamp: original Job %v/%v is gone: got uid %v, wanted %v", j.Namespace, j.Name, fresh.UID, j.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("%v/%v has just been deleted at %v", fresh.Namespace, fresh.Name, fresh.DeletionTimestamp)
	}
	return nil
}

// adoptPod makes j the pod's controller and adds the tracking finalizer,
// by a strategic merge patch conditional on the pod's uid.
func (c *Controller) adoptPod(ctx context.Context, j *batchv1.Job, p *corev1.Pod) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": []metav1.OwnerReference{*metav1.NewControllerRef(j, jobKind)},
		"uid":             p.UID,
		"finalizers":      []string{batchv1.JobTrackingFinalizer}}})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

// releasePod removes j's ownerReference and the tracking finalizer from
// the pod; a pod gone or replaced is let go.
func (c *Controller) releasePod(ctx context.Context, j *batchv1.Job, p *corev1.Pod) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":                                 p.UID,
		"ownerReferences":                     []map[string]string{{"$patch": "delete", "uid": string(j.UID)}},
		"$deleteFromPrimitiveList/finalizers": []string{batchv1.JobTrackingFinalizer}}})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil
	}
	return err
}
