package registry

import (
	"maps"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Create preparation of Jobs (upstream pkg/registry/batch/job/strategy.go)
// beyond the generic status rule.

// prepareJobForCreate generates the selector and pod labels (unless
// spec.manualSelector is true). It needs metadata.uid,
// which the server fills in before preparing the object, as upstream does.
// A Job without labels then takes its pod template's: upstream's Job
// defaulting does so on every decode, the read of the created object
// from storage included, so a Job created without labels (a CronJob's,
// kubectl create job's) shows the generated ones.
func prepareJobForCreate(obj runtime.Object) {
	job := obj.(*batchv1.Job)
	if !ptr.Deref(job.Spec.ManualSelector, false) {
		generateJobSelector(job)
	}
	if len(job.Labels) == 0 && len(job.Spec.Template.Labels) > 0 {
		job.Labels = maps.Clone(job.Spec.Template.Labels)
	}
}

// generateJobSelector labels the pod template with the job name and uid
// (legacy and batch.kubernetes.io/ keys) and selects on the uid. Labels the
// user already set are kept; validation rejects conflicting ones.
func generateJobSelector(job *batchv1.Job) {
	t := &job.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	uid := string(job.UID)
	for key, value := range map[string]string{
		legacyJobNameLabel: job.Name, batchv1.JobNameLabel: job.Name,
		legacyControllerUIDLabel: uid, batchv1.ControllerUidLabel: uid,
	} {
		if _, ok := t.Labels[key]; !ok {
			t.Labels[key] = value
		}
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{}
	}
	if job.Spec.Selector.MatchLabels == nil {
		job.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = uid
	}
}
