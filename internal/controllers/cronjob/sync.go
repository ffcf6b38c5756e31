package cronjob

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// sync brings one CronJob up to date: finished Jobs beyond the history
// limits deleted, status.active following its Jobs, a Job started if a
// start time has come; the status written once if any of that changed
// it. It returns when to look at the CronJob again, if ever.
func (c *Controller) sync(ctx context.Context, key string) (*time.Time, error) {
	namespace, name, _ := strings.Cut(key, "/")
	cached, ok := c.cronJobs.Get(namespace, name)
	if !ok {
		return nil, nil
	}
	cj := cached.DeepCopy()
	jobs := c.jobsOf(cj)
	cleaned := c.cleanupFinishedJobs(ctx, cj, jobs)
	requeueAfter, changed, syncErr := c.syncCronJob(ctx, cj, jobs)
	if syncErr != nil {
		c.log.Debug("reconciling a cronjob", "cronjob", key, "err", syncErr)
	}
	if cleaned || changed {
		if _, err := c.client.BatchV1().CronJobs(cj.Namespace).UpdateStatus(ctx, cj, metav1.UpdateOptions{}); err != nil {
			return nil, err
		}
	}
	if requeueAfter != nil {
		return requeueAfter, nil
	}
	return nil, syncErr
}

// syncCronJob brings cj's status.active in line with its Jobs and starts
// the Job of the start time that has come, if any. It returns when to
// look again and whether cj's status changed.
func (c *Controller) syncCronJob(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (*time.Time, bool, error) {
	now := c.now()
	cj, changed, err := c.followJobs(ctx, cj, jobs)
	if err != nil {
		return nil, changed, err
	}
	if cj.DeletionTimestamp != nil {
		return nil, changed, nil
	}
	if tz := cj.Spec.TimeZone; tz != nil {
		if _, err := time.LoadLocation(*tz); err != nil {
			c.recorder.Eventf(cj, corev1.EventTypeWarning, "UnknownTimeZone", "invalid timeZone: %q: %s", *tz, err)
			return nil, changed, nil
		}
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return nil, changed, nil
	}
	sched, err := ParseSchedule(ScheduleSpec(cj, c.recorder))
	if err != nil {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "UnparseableSchedule", "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	scheduled, err := NextScheduleTime(cj, now, sched, c.recorder)
	if err != nil {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "InvalidSchedule", "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	wait := func() *time.Time { at := now.Add(RequeueAfter(cj, now, sched)); return &at }
	if scheduled == nil {
		return wait(), changed, nil
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && scheduled.Add(time.Duration(*d)*time.Second).Before(now) {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return wait(), changed, nil
	}
	if activeByName(cj, cj.Namespace, JobName(cj, *scheduled)) || cj.Status.LastScheduleTime.Equal(&metav1.Time{Time: *scheduled}) {
		return wait(), changed, nil
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0 {
		c.recorder.Eventf(cj, corev1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
		return wait(), changed, nil
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent {
		replaced, err := c.replaceActive(ctx, cj)
		if err != nil {
			return nil, changed || replaced, err
		}
		changed = changed || replaced
	}
	started, err := c.startJob(ctx, cj, *scheduled)
	if err != nil || !started {
		return nil, changed, err
	}
	return wait(), true, nil
}

// followJobs reads cj's Jobs: a running Job missing from status.active is
// an UnexpectedJob (unless a fresh read of the CronJob has it, which then
// replaces cj), a finished one leaves it (SawCompletedJob) and a
// successful one moves lastSuccessfulTime; an entry whose Job is gone
// from the server too leaves it (MissingJob).
func (c *Controller) followJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (*batchv1.CronJob, bool, error) {
	changed := false
	ours := map[types.UID]bool{}
	for _, j := range jobs {
		ours[j.UID] = true
		active := activeIndex(cj, j.UID) >= 0
		done := finished(j)
		if !active && done == "" {
			fresh, err := c.client.BatchV1().CronJobs(cj.Namespace).Get(ctx, cj.Name, metav1.GetOptions{})
			if err != nil {
				return cj, changed, err
			}
			if activeIndex(fresh, j.UID) >= 0 {
				cj = fresh
				continue
			}
			c.recorder.Eventf(cj, corev1.EventTypeWarning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: %s", j.Name)
			continue
		}
		if done == "" {
			continue
		}
		if active {
			removeActive(cj, j.UID)
			c.recorder.Eventf(cj, corev1.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, done)
			changed = true
		}
		if done == batchv1.JobComplete && succeededLater(cj, j) {
			cj.Status.LastSuccessfulTime = j.Status.CompletionTime
			changed = true
		}
	}
	for _, ref := range cj.Status.Active {
		if ours[ref.UID] {
			continue
		}
		_, err := c.client.BatchV1().Jobs(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			c.recorder.Eventf(cj, corev1.EventTypeNormal, "MissingJob", "Active job went missing: %v", ref.Name)
			removeActive(cj, ref.UID)
			changed = true
		case err != nil:
			return cj, changed, err
		}
	}
	return cj, changed, nil
}

// succeededLater says whether the successful Job j moves cj's
// lastSuccessfulTime: it has none yet, or j completed after it.
func succeededLater(cj *batchv1.CronJob, j *batchv1.Job) bool {
	last := cj.Status.LastSuccessfulTime
	if last == nil {
		return true
	}
	return j.Status.CompletionTime != nil && j.Status.CompletionTime.After(last.Time)
}

// replaceActive deletes cj's running Jobs before a new start (policy
// Replace).
func (c *Controller) replaceActive(ctx context.Context, cj *batchv1.CronJob) (bool, error) {
	changed := false
	for _, ref := range slices.Clone(cj.Status.Active) {
		j, err := c.client.BatchV1().Jobs(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			c.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedGet", "Get job: %v", err)
			return changed, err
		}
		if !c.deleteJob(ctx, cj, j) {
			return changed, fmt.Errorf("could not replace job %s/%s", j.Namespace, j.Name)
		}
		changed = true
	}
	return changed, nil
}

// startJob creates the Job of a start time and adds it to status.active,
// with lastScheduleTime. A Job of that name the CronJob already controls
// (created before a status write that failed) is taken as created; one
// it does not control is left alone. It says whether status changed.
func (c *Controller) startJob(ctx context.Context, cj *batchv1.CronJob, scheduled time.Time) (bool, error) {
	want, err := JobFromTemplate(cj, scheduled)
	if err != nil {
		return false, err
	}
	created, err := c.client.BatchV1().Jobs(cj.Namespace).Create(ctx, want, metav1.CreateOptions{})
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return false, err
	case apierrors.IsAlreadyExists(err):
		existing, err := c.client.BatchV1().Jobs(cj.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !metav1.IsControlledBy(existing, cj) || activeIndex(cj, existing.UID) >= 0 {
			return false, nil
		}
		c.log.Info("job already exists", "cronjob", cj.Namespace+"/"+cj.Name, "job", want.Name)
		created = existing
	case err != nil:
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		return false, err
	default:
		c.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulCreate", "Created job %v", created.Name)
	}
	cj.Status.Active = append(cj.Status.Active, jobRef(created))
	cj.Status.LastScheduleTime = &metav1.Time{Time: scheduled}
	return true, nil
}
