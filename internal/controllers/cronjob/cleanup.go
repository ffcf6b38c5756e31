package cronjob

import (
	"context"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cleanupFinishedJobs deletes cj's oldest successful and failed Jobs
// beyond successfulJobsHistoryLimit and failedJobsHistoryLimit (a limit
// not set keeps them all). It says whether cj's status changed.
func (c *Controller) cleanupFinishedJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) bool {
	if cj.Spec.SuccessfulJobsHistoryLimit == nil && cj.Spec.FailedJobsHistoryLimit == nil {
		return false
	}
	var succeeded, failed []*batchv1.Job
	for _, j := range jobs {
		switch finished(j) {
		case batchv1.JobComplete:
			succeeded = append(succeeded, j)
		case batchv1.JobFailed:
			failed = append(failed, j)
		}
	}
	changed := false
	if limit := cj.Spec.SuccessfulJobsHistoryLimit; limit != nil && c.removeOldest(ctx, cj, succeeded, int(*limit)) {
		changed = true
	}
	if limit := cj.Spec.FailedJobsHistoryLimit; limit != nil && c.removeOldest(ctx, cj, failed, int(*limit)) {
		changed = true
	}
	return changed
}

// removeOldest deletes the oldest of jobs beyond keep.
func (c *Controller) removeOldest(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job, keep int) bool {
	if len(jobs) <= keep {
		return false
	}
	slices.SortFunc(jobs, OldestFirst)
	changed := false
	for _, j := range jobs[:len(jobs)-keep] {
		if c.deleteJob(ctx, cj, j) {
			changed = true
		}
	}
	return changed
}

// deleteJob deletes a Job of cj in the background (its pods go after it)
// and takes it out of status.active; a failure is a FailedDelete warning.
func (c *Controller) deleteJob(ctx context.Context, cj *batchv1.CronJob, j *batchv1.Job) bool {
	background := metav1.DeletePropagationBackground
	if err := c.client.BatchV1().Jobs(j.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
		c.log.Warn("deleting a job of a cronjob", "cronjob", cj.Namespace+"/"+cj.Name, "job", j.Name, "err", err)
		return false
	}
	removeActive(cj, j.UID)
	c.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", j.Name)
	return true
}
