package printers

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func template(containers ...string) corev1.PodTemplateSpec {
	var cs []corev1.Container
	for i := 0; i+1 < len(containers); i += 2 {
		cs = append(cs, corev1.Container{Name: containers[i], Image: containers[i+1]})
	}
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: cs}}
}

var appSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

// TestDeploymentTable mirrors upstream's TestPrintDeployment.
func TestDeploymentTable(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: objMeta("api"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](5), Selector: appSelector,
		Template: template("fake-container1", "fake-image1", "fake-container2", "fake-image2")},
		Status: appsv1.DeploymentStatus{Replicas: 10, UpdatedReplicas: 2, AvailableReplicas: 1, ReadyReplicas: 1, UnavailableReplicas: 4}}
	bad := d.DeepCopy()
	bad.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	header := []string{"Name", "Ready", "Up-to-date", "Available", "Age", "+Containers", "+Images", "+Selector"}
	checkKind(t, lookup(t, "apps", "v1", "deployments"), header, []cellCase{
		{name: "deployment", obj: d, cells: []any{"api", "1/5", int64(2), int64(1), "5m", "fake-container1,fake-container2", "fake-image1,fake-image2", "app=web"}},
		{name: "invalid selector", obj: bad, cells: []any{"api", "1/5", int64(2), int64(1), "5m", "fake-container1,fake-container2", "fake-image1,fake-image2", "<invalid>"}},
	})
}

// TestReplicaSetAndStatefulSetTables mirror upstream's TestPrintReplicaSet
// and TestPrintStatefulSet.
func TestReplicaSetAndStatefulSetTables(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: objMeta("api-1"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](5), Selector: appSelector,
		Template: template("app", "nginx")}, Status: appsv1.ReplicaSetStatus{Replicas: 5, ReadyReplicas: 2}}
	checkKind(t, lookup(t, "apps", "v1", "replicasets"), []string{"Name", "Desired", "Current", "Ready", "Age", "+Containers", "+Images", "+Selector"}, []cellCase{
		{name: "replicaset", obj: rs, cells: []any{"api-1", int64(5), int64(5), int64(2), "5m", "app", "nginx", "app=web"}},
	})
	ss := &appsv1.StatefulSet{ObjectMeta: objMeta("db"), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Template: template("pg", "postgres:17")},
		Status: appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 2}}
	checkKind(t, lookup(t, "apps", "v1", "statefulsets"), []string{"Name", "Ready", "Age", "+Containers", "+Images"}, []cellCase{
		{name: "statefulset", obj: ss, cells: []any{"db", "2/3", "5m", "pg", "postgres:17"}},
	})
}

// TestDaemonSetTable mirrors upstream's TestPrintDaemonSet.
func TestDaemonSetTable(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: objMeta("agent"), Spec: appsv1.DaemonSetSpec{Selector: appSelector, Template: template("a", "agent:1")},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 2, NumberReady: 1, UpdatedNumberScheduled: 2, NumberAvailable: 0}}
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	checkKind(t, lookup(t, "apps", "v1", "daemonsets"), []string{"Name", "Desired", "Current", "Ready", "Up-to-date", "Available",
		"Node Selector", "Age", "+Containers", "+Images", "+Selector"}, []cellCase{
		{name: "daemonset", obj: ds, cells: []any{"agent", int64(3), int64(2), int64(1), int64(2), int64(0), "disk=ssd", "5m", "a", "agent:1", "app=web"}},
	})
}

// TestJobTable mirrors upstream's TestPrintJob.
func TestJobTable(t *testing.T) {
	job := func(mutate func(*batchv1.Job)) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: objMeta("job1"), Spec: batchv1.JobSpec{Completions: ptr.To[int32](2), Selector: appSelector,
			Template: template("fake-job-container1", "fake-job-image1")}, Status: batchv1.JobStatus{Succeeded: 1}}
		mutate(j)
		return j
	}
	cond := func(t batchv1.JobConditionType) []batchv1.JobCondition {
		return []batchv1.JobCondition{{Type: t, Status: corev1.ConditionTrue}}
	}
	start, end := ago(3*time.Hour), ago(time.Hour)
	row := func(status, completions, took string) []any {
		return []any{"job1", status, completions, took, "5m", "fake-job-container1", "fake-job-image1", "app=web"}
	}
	checkKind(t, lookup(t, "batch", "v1", "jobs"), []string{"Name", "Status", "Completions", "Duration", "Age", "+Containers", "+Images", "+Selector"}, []cellCase{
		{name: "not started", obj: job(func(*batchv1.Job) {}), cells: row("Running", "1/2", "")},
		{name: "running", obj: job(func(j *batchv1.Job) { j.Status.StartTime = &start }), cells: row("Running", "1/2", "3h")},
		{name: "complete", obj: job(func(j *batchv1.Job) {
			j.Status.StartTime, j.Status.CompletionTime, j.Status.Conditions = &start, &end, cond(batchv1.JobComplete)
		}), cells: row("Complete", "1/2", "120m")},
		{name: "failed", obj: job(func(j *batchv1.Job) { j.Status.Conditions = cond(batchv1.JobFailed) }), cells: row("Failed", "1/2", "")},
		{name: "suspended", obj: job(func(j *batchv1.Job) { j.Status.Conditions = cond(batchv1.JobSuspended) }), cells: row("Suspended", "1/2", "")},
		{name: "failure target", obj: job(func(j *batchv1.Job) { j.Status.Conditions = cond(batchv1.JobFailureTarget) }), cells: row("FailureTarget", "1/2", "")},
		{name: "terminating", obj: job(func(j *batchv1.Job) { j.DeletionTimestamp = &end }), cells: row("Terminating", "1/2", "")},
		{name: "no completions", obj: job(func(j *batchv1.Job) { j.Spec.Completions = nil }), cells: row("Running", "1/1", "")},
		{name: "parallel work queue", obj: job(func(j *batchv1.Job) { j.Spec.Completions, j.Spec.Parallelism = nil, ptr.To[int32](4) }),
			cells: row("Running", "1/1 of 4", "")},
	})
}

// TestCronJobTable mirrors upstream's TestPrintCronJob.
func TestCronJobTable(t *testing.T) {
	cj := &batchv1.CronJob{ObjectMeta: objMeta("nightly"), Spec: batchv1.CronJobSpec{Schedule: "0/5 * * * ?", Suspend: ptr.To(false),
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template("c", "busybox")}}}}
	scheduled := cj.DeepCopy()
	last := ago(30 * time.Second)
	scheduled.Spec.TimeZone, scheduled.Spec.Suspend = ptr.To("Europe/Paris"), nil
	scheduled.Status = batchv1.CronJobStatus{LastScheduleTime: &last, Active: []corev1.ObjectReference{{Name: "nightly-1"}}}
	header := []string{"Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age", "+Containers", "+Images", "+Selector"}
	checkKind(t, lookup(t, "batch", "v1", "cronjobs"), header, []cellCase{
		{name: "never scheduled", obj: cj, cells: []any{"nightly", "0/5 * * * ?", "<none>", "False", int64(0), "<none>", "5m", "c", "busybox", "<none>"}},
		{name: "scheduled", obj: scheduled, cells: []any{"nightly", "0/5 * * * ?", "Europe/Paris", "<unset>", int64(1), "30s", "5m", "c", "busybox", "<none>"}},
	})
}

// TestControllerRevisionTable mirrors upstream's TestPrintControllerRevision.
func TestControllerRevisionTable(t *testing.T) {
	owned := &appsv1.ControllerRevision{ObjectMeta: objMeta("web-1"), Revision: 2}
	owned.OwnerReferences = []metav1.OwnerReference{
		{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "other"},
		{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", Controller: ptr.To(true)},
	}
	core := owned.DeepCopy()
	core.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", Controller: ptr.To(true)}}
	checkKind(t, lookup(t, "apps", "v1", "controllerrevisions"), []string{"Name", "Controller", "Revision", "Age"}, []cellCase{
		{name: "owned by a statefulset", obj: owned, cells: []any{"web-1", "statefulset.apps/web", int64(2), "5m"}},
		{name: "core owner", obj: core, cells: []any{"web-1", "pod/p", int64(2), "5m"}},
		{name: "orphan", obj: &appsv1.ControllerRevision{ObjectMeta: objMeta("web-1"), Revision: 1}, cells: []any{"web-1", "<none>", int64(1), "5m"}},
	})
}
