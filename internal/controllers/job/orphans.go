package job

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// orphanKey names the pods whose tracking finalizer may be left behind:
// one pod by name, or every pod of a namespace matching a selector (those
// of a Job finished or deleted).
type orphanKey struct {
	namespace string
	name      string
	selector  string // a label selector, when name is ""
}

func (c *Controller) enqueueOrphanPod(p *corev1.Pod) {
	c.orphanQueue.Add(orphanKey{namespace: p.Namespace, name: p.Name})
}

func (c *Controller) enqueueOrphansOf(j *batchv1.Job) {
	sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	if err != nil {
		c.log.Warn("invalid selector", "job", jobKey(j), "err", err)
		return
	}
	c.orphanQueue.Add(orphanKey{namespace: j.Namespace, selector: sel.String()})
}

func (c *Controller) processNextOrphan(ctx context.Context) bool {
	k, quit := c.orphanQueue.Get()
	if quit {
		return false
	}
	defer c.orphanQueue.Done(k)
	if err := c.syncOrphans(ctx, k); err != nil {
		if ctx.Err() == nil {
			c.log.Log(ctx, syncErrorLevel(err), "removing an orphan's tracking finalizer failed, will retry", "namespace", k.namespace, "pod", k.name, "err", err)
			c.orphanQueue.AddRateLimited(k)
		}
		return true
	}
	c.orphanQueue.Forget(k)
	return true
}

func (c *Controller) syncOrphans(ctx context.Context, k orphanKey) error {
	if k.name != "" {
		p, ok := c.pods.Get(k.namespace, k.name)
		if !ok {
			return nil
		}
		return c.releaseOrphan(ctx, p)
	}
	sel, err := labels.Parse(k.selector)
	if err != nil {
		return fmt.Errorf("invalid label selector: %w", err)
	}
	for _, p := range c.pods.List(k.namespace, func(p *corev1.Pod) bool { return sel.Matches(labels.Set(p.Labels)) }) {
		if err := c.releaseOrphan(ctx, p); err != nil {
			c.log.Warn("removing an orphan's tracking finalizer", "pod", key(p.Namespace, p.Name), "err", err)
			c.orphanQueue.AddRateLimited(orphanKey{namespace: p.Namespace, name: p.Name})
		}
	}
	return nil
}

// releaseOrphan removes the tracking finalizer of a pod no running Job of
// this controller controls any more.
func (c *Controller) releaseOrphan(ctx context.Context, p *corev1.Pod) error {
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		if ref.Kind != "Job" || ref.APIVersion != batchv1.SchemeGroupVersion.String() {
			return nil
		}
		if j := c.jobFor(p.Namespace, ref); j != nil && (managedElsewhere(j) || !isFinished(j)) {
			return nil
		}
	}
	if err := c.removeTrackingFinalizer(ctx, p); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// managedElsewhere: spec.managedBy names another controller.
func managedElsewhere(j *batchv1.Job) bool {
	return j.Spec.ManagedBy != nil && *j.Spec.ManagedBy != batchv1.JobControllerName
}
