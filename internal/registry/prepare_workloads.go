package registry

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Create/update preparation of the apps/v1 and batch/v1 workloads (upstream
// pkg/registry/apps/*/strategy.go and pkg/registry/batch/*/strategy.go)
// beyond the generic status rule (PrepareForCreate, PrepareForUpdate).

// Upstream's internal DaemonSet has spec.templateGeneration; apps/v1 carries
// it in this annotation, which every v1 DaemonSet therefore shows.
const daemonSetTemplateGeneration = appsv1.DeprecatedTemplateGeneration

func prepareDaemonSetForCreate(obj runtime.Object) {
	ds := obj.(*appsv1.DaemonSet)
	gen := templateGeneration(&ds.ObjectMeta)
	if gen < 1 {
		gen = 1
	}
	setTemplateGeneration(&ds.ObjectMeta, gen)
}

// prepareDaemonSetForUpdate bumps the template generation when (and only
// when) the pod template changed.
func prepareDaemonSetForUpdate(obj, old runtime.Object) {
	ds, oldDS := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
	gen := templateGeneration(&oldDS.ObjectMeta)
	if !apiequality.Semantic.DeepEqual(ds.Spec.Template, oldDS.Spec.Template) {
		gen++
	}
	setTemplateGeneration(&ds.ObjectMeta, gen)
}

func templateGeneration(m *metav1.ObjectMeta) int64 {
	n, _ := strconv.ParseInt(m.Annotations[daemonSetTemplateGeneration], 10, 64)
	return n
}

func setTemplateGeneration(m *metav1.ObjectMeta, gen int64) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[daemonSetTemplateGeneration] = strconv.FormatInt(gen, 10)
}

// prepareJobForCreate generates the selector and pod labels (unless
// spec.manualSelector is true). It needs metadata.uid,
// which the server fills in before preparing the object, as upstream does.
func prepareJobForCreate(obj runtime.Object) {
	job := obj.(*batchv1.Job)
	if !ptr.Deref(job.Spec.ManualSelector, false) {
		generateJobSelector(job)
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
