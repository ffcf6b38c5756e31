package cronjob

import (
	"fmt"
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// JobName is the name of cj's Job for a start time: the CronJob's name
// and the time in minutes since the epoch, so a start time makes one Job
// however often it is tried.
func JobName(cj *batchv1.CronJob, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
}

// JobFromTemplate is the Job cj starts at a start time: its job
// template's labels, annotations and spec, the start time (in the
// CronJob's time zone, RFC 3339) in the batch.kubernetes.io/
// cronjob-scheduled-timestamp annotation, and the CronJob as controller.
func JobFromTemplate(cj *batchv1.CronJob, scheduled time.Time) (*batchv1.Job, error) {
	loc, err := time.LoadLocation(ptr.Deref(cj.Spec.TimeZone, ""))
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	maps.Copy(labels, cj.Spec.JobTemplate.Labels)
	annotations := map[string]string{}
	maps.Copy(annotations, cj.Spec.JobTemplate.Annotations)
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{
		Name:              JobName(cj, scheduled),
		Labels:            labels,
		Annotations:       annotations,
		CreationTimestamp: metav1.Time{Time: scheduled},
		OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(cj, controllerKind)},
	}}
	cj.Spec.JobTemplate.Spec.DeepCopyInto(&job.Spec)
	return job, nil
}

// finished is the condition that ended the Job (Complete or Failed), or
// "" while it runs.
func finished(j *batchv1.Job) batchv1.JobConditionType {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

// OldestFirst orders Jobs by start time, those not started last, then by
// name: the order in which finished Jobs beyond a history limit go.
func OldestFirst(a, b *batchv1.Job) int {
	as, bs := a.Status.StartTime, b.Status.StartTime
	switch {
	case as == nil && bs != nil:
		return 1
	case as != nil && bs == nil:
		return -1
	case as.Equal(bs):
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	case as.Before(bs):
		return -1
	}
	return 1
}

// activeIndex is the position of the Job uid in cj's status.active, or -1.
func activeIndex(cj *batchv1.CronJob, uid types.UID) int {
	for i, ref := range cj.Status.Active {
		if ref.UID == uid {
			return i
		}
	}
	return -1
}

// activeByName says whether status.active names the Job namespace/name.
func activeByName(cj *batchv1.CronJob, namespace, name string) bool {
	for _, ref := range cj.Status.Active {
		if ref.Name == name && ref.Namespace == namespace {
			return true
		}
	}
	return false
}

// removeActive takes the Job uid out of cj's status.active.
func removeActive(cj *batchv1.CronJob, uid types.UID) {
	active := []corev1.ObjectReference{}
	for _, ref := range cj.Status.Active {
		if ref.UID != uid {
			active = append(active, ref)
		}
	}
	cj.Status.Active = active
}

// jobRef is the status.active entry of a Job, as client-go's
// reference.GetReference makes it.
func jobRef(j *batchv1.Job) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: j.Namespace, Name: j.Name,
		UID: j.UID, ResourceVersion: j.ResourceVersion}
}
