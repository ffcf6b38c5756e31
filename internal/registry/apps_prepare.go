package registry

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Create/update preparation of the apps/v1 workloads (upstream
// pkg/registry/apps/*/strategy.go) beyond the generic status rule
// (PrepareForCreate, PrepareForUpdate).

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

// prepareDeploymentForUpdate: an update of a Deployment's annotations
// bumps its generation too (they are copied to its ReplicaSets); a change
// of its spec does through the generic rule.
func prepareDeploymentForUpdate(obj, old runtime.Object) {
	d, oldD := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
	if !apiequality.Semantic.DeepEqual(d.Annotations, oldD.Annotations) {
		d.Generation = oldD.Generation + 1
	}
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
