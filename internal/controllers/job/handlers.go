package job

import (
	"reflect"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// jobFor is the Job a controller reference names, if it is a Job still
// of that uid.
func (c *Controller) jobFor(namespace string, ref *metav1.OwnerReference) *batchv1.Job {
	if ref.Kind != "Job" {
		return nil
	}
	j, ok := c.jobs.Get(namespace, ref.Name)
	if !ok || j.UID != ref.UID {
		return nil
	}
	return j
}

// jobsMatching are the Jobs whose selector matches the pod's labels.
func (c *Controller) jobsMatching(pod *corev1.Pod) []*batchv1.Job {
	if len(pod.Labels) == 0 {
		return nil
	}
	return c.jobs.List(pod.Namespace, func(j *batchv1.Job) bool {
		sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
		return err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels))
	})
}

func (c *Controller) enqueueAfter(j *batchv1.Job, d time.Duration) { c.queue.AddAfter(jobKey(j), d) }

// enqueueBatched syncs j after the batch period (pod events, status
// writes).
func (c *Controller) enqueueBatched(j *batchv1.Job) { c.enqueueAfter(j, syncBatchPeriod) }

func (c *Controller) addPod(pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		c.podDeleted(pod, false)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		if j := c.jobFor(pod.Namespace, ref); j != nil {
			c.expectations.CreationObserved(jobKey(j))
			c.enqueueBatched(j)
		}
		return
	}
	if hasTrackingFinalizer(pod) {
		c.enqueueOrphanPod(pod)
	}
	for _, j := range c.jobsMatching(pod) {
		c.enqueueBatched(j)
	}
}

func (c *Controller) updatePod(old, cur *corev1.Pod) {
	if cur.ResourceVersion == old.ResourceVersion {
		return
	}
	if cur.DeletionTimestamp != nil {
		c.podDeleted(cur, false)
		return
	}
	finalizerRemoved := !hasTrackingFinalizer(cur)
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if j := c.jobFor(old.Namespace, oldRef); j != nil {
			if finalizerRemoved {
				c.finalizerExpectations.removalObserved(jobKey(j), cur.UID)
			}
			c.enqueueBatched(j)
		}
	}
	if curRef != nil {
		if j := c.jobFor(cur.Namespace, curRef); j != nil {
			if finalizerRemoved {
				c.finalizerExpectations.removalObserved(jobKey(j), cur.UID)
			}
			c.enqueueBatched(j)
		}
		return
	}
	if hasTrackingFinalizer(cur) {
		c.enqueueOrphanPod(cur)
	}
	if refChanged || !reflect.DeepEqual(cur.Labels, old.Labels) {
		for _, j := range c.jobsMatching(cur) {
			c.enqueueBatched(j)
		}
	}
}

// podDeleted handles a pod gone (final) or being deleted.
func (c *Controller) podDeleted(pod *corev1.Pod, final bool) {
	ref := metav1.GetControllerOfNoCopy(pod)
	hasFinalizer := hasTrackingFinalizer(pod)
	if ref == nil {
		if hasFinalizer {
			c.enqueueOrphanPod(pod)
		}
		return
	}
	j := c.jobFor(pod.Namespace, ref)
	if j == nil || isFinished(j) {
		if hasFinalizer {
			c.enqueueOrphanPod(pod)
		}
		return
	}
	k := jobKey(j)
	c.expectations.DeletionObserved(k)
	if final || !hasFinalizer {
		c.finalizerExpectations.removalObserved(k, pod.UID)
	}
	c.enqueueBatched(j)
}

func (c *Controller) addJob(j *batchv1.Job) { c.queue.Add(jobKey(j)) }

func (c *Controller) updateJob(old, cur *batchv1.Job) {
	if old.UID != cur.UID {
		c.deleteJob(old)
		c.addJob(cur)
		return
	}
	if isFinished(cur) {
		c.enqueueOrphansOf(cur)
		return
	}
	if cur.Generation == old.Generation {
		c.enqueueBatched(cur)
	} else {
		c.queue.Add(jobKey(cur))
	}
	if cur.Status.StartTime != nil && cur.Spec.ActiveDeadlineSeconds != nil {
		if ads := old.Spec.ActiveDeadlineSeconds; ads == nil || *ads != *cur.Spec.ActiveDeadlineSeconds {
			total := time.Duration(*cur.Spec.ActiveDeadlineSeconds) * time.Second
			c.enqueueAfter(cur, total-c.now().Sub(cur.Status.StartTime.Time))
		}
	}
}

func (c *Controller) deleteJob(j *batchv1.Job) {
	k := jobKey(j)
	c.queue.Add(k)
	c.finishedJobs.Delete(j.UID)
	c.enqueueOrphansOf(j)
	c.expectations.Forget(k)
	c.backoffs.remove(k)
}
