package printers

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Column descriptions, from the API versions upstream's printers take
// them from (1.37: the v1 types).
var (
	deploymentSpecDoc, deploymentStatusDoc = appsv1.DeploymentSpec{}.SwaggerDoc(), appsv1.DeploymentStatus{}.SwaggerDoc()
	replicaSetSpecDoc, replicaSetStatusDoc = appsv1.ReplicaSetSpec{}.SwaggerDoc(), appsv1.ReplicaSetStatus{}.SwaggerDoc()
	daemonSetStatusDoc                     = appsv1.DaemonSetStatus{}.SwaggerDoc()
	cronJobSpecDoc, cronJobStatusDoc       = batchv1.CronJobSpec{}.SwaggerDoc(), batchv1.CronJobStatus{}.SwaggerDoc()
	jobSelectorColumn                      = wide(str("Selector", batchv1.JobSpec{}.SwaggerDoc()["selector"]))
)

var deploymentPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Ready", "Number of the pod with ready state"),
	str("Up-to-date", deploymentStatusDoc["updatedReplicas"]),
	str("Available", deploymentStatusDoc["availableReplicas"]),
	ageColumn,
	containersColumn,
	imagesColumn,
	wide(str("Selector", deploymentSpecDoc["selector"])),
}, func(d *appsv1.Deployment, now time.Time) []any {
	selector := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		selector = s.String()
	}
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return []any{d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, deref(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), since(d.CreationTimestamp, now),
		names, images, selector}
})

var replicaSetPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	integer("Desired", replicaSetSpecDoc["replicas"]),
	integer("Current", replicaSetStatusDoc["replicas"]),
	integer("Ready", replicaSetStatusDoc["readyReplicas"]),
	ageColumn,
	containersColumn,
	imagesColumn,
	wide(str("Selector", replicaSetSpecDoc["selector"])),
}, func(rs *appsv1.ReplicaSet, now time.Time) []any {
	names, images := containerCells(rs.Spec.Template.Spec.Containers)
	return []any{rs.Name, int64(deref(rs.Spec.Replicas)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
		since(rs.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(rs.Spec.Selector)}
})

var statefulSetPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Ready", "Number of the pod with ready state"),
	ageColumn,
	containersColumn,
	imagesColumn,
}, func(ss *appsv1.StatefulSet, now time.Time) []any {
	names, images := containerCells(ss.Spec.Template.Spec.Containers)
	return []any{ss.Name, fmt.Sprintf("%d/%d", ss.Status.ReadyReplicas, deref(ss.Spec.Replicas)), since(ss.CreationTimestamp, now), names, images}
})

var daemonSetPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	integer("Desired", daemonSetStatusDoc["desiredNumberScheduled"]),
	integer("Current", daemonSetStatusDoc["currentNumberScheduled"]),
	integer("Ready", daemonSetStatusDoc["numberReady"]),
	integer("Up-to-date", daemonSetStatusDoc["updatedNumberScheduled"]),
	integer("Available", daemonSetStatusDoc["numberAvailable"]),
	str("Node Selector", corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]),
	ageColumn,
	containersColumn,
	imagesColumn,
	wide(str("Selector", appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"])),
}, func(ds *appsv1.DaemonSet, now time.Time) []any {
	st := ds.Status
	names, images := containerCells(ds.Spec.Template.Spec.Containers)
	return []any{ds.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
		int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
		since(ds.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(ds.Spec.Selector)}
})

var jobPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Status", "Status of the job."),
	str("Completions", batchv1.JobStatus{}.SwaggerDoc()["succeeded"]),
	str("Duration", "Time required to complete the job."),
	ageColumn,
	containersColumn,
	imagesColumn,
	jobSelectorColumn,
}, func(j *batchv1.Job, now time.Time) []any {
	completions := fmt.Sprintf("%d/1", j.Status.Succeeded)
	switch parallelism := deref(j.Spec.Parallelism); {
	case j.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	case parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, parallelism)
	}
	var took string
	switch start, end := j.Status.StartTime, j.Status.CompletionTime; {
	case start == nil:
	case end == nil:
		took = duration.HumanDuration(now.Sub(start.Time))
	default:
		took = duration.HumanDuration(end.Sub(start.Time))
	}
	names, images := containerCells(j.Spec.Template.Spec.Containers)
	return []any{j.Name, jobStatus(j), completions, took, since(j.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(j.Spec.Selector)}
})

// jobStatus is the STATUS cell: the first of Complete, Failed, Terminating,
// Suspended and FailureTarget that holds, else Running.
func jobStatus(j *batchv1.Job) string {
	holds := func(t batchv1.JobConditionType) bool {
		for _, c := range j.Status.Conditions {
			if c.Type == t {
				return c.Status == corev1.ConditionTrue
			}
		}
		return false
	}
	switch {
	case holds(batchv1.JobComplete):
		return "Complete"
	case holds(batchv1.JobFailed):
		return "Failed"
	case j.DeletionTimestamp != nil:
		return "Terminating"
	case holds(batchv1.JobSuspended):
		return "Suspended"
	case holds(batchv1.JobFailureTarget):
		return "FailureTarget"
	}
	return "Running"
}

var cronJobPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Schedule", cronJobSpecDoc["schedule"]),
	str("Timezone", cronJobSpecDoc["timeZone"]),
	boolean("Suspend", cronJobSpecDoc["suspend"]),
	integer("Active", cronJobStatusDoc["active"]),
	str("Last Schedule", cronJobStatusDoc["lastScheduleTime"]),
	ageColumn,
	containersColumn,
	imagesColumn,
	jobSelectorColumn,
}, func(cj *batchv1.CronJob, now time.Time) []any {
	last := "<none>"
	if t := cj.Status.LastScheduleTime; t != nil {
		last = since(*t, now)
	}
	tz := "<none>"
	if cj.Spec.TimeZone != nil {
		tz = *cj.Spec.TimeZone
	}
	tmpl := cj.Spec.JobTemplate.Spec
	names, images := containerCells(tmpl.Template.Spec.Containers)
	return []any{cj.Name, cj.Spec.Schedule, tz, boolPtr(cj.Spec.Suspend), int64(len(cj.Status.Active)), last,
		since(cj.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(tmpl.Selector)}
})

var controllerRevisionPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Controller", "Controller of the object"),
	str("Revision", appsv1.ControllerRevision{}.SwaggerDoc()["revision"]),
	ageColumn,
}, func(cr *appsv1.ControllerRevision, now time.Time) []any {
	controller := "<none>"
	if ref := metav1.GetControllerOf(cr); ref != nil {
		controller = ref.Name
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
			if gk := gv.WithKind(ref.Kind).GroupKind(); !gk.Empty() {
				controller = strings.ToLower(gk.String()) + "/" + ref.Name
			}
		}
	}
	return []any{cr.Name, controller, cr.Revision, since(cr.CreationTimestamp, now)}
})
