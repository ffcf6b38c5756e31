package registry

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The warnings of Pods and of the kinds with a pod template, as upstream's
// strategies' WarningsOnCreate and WarningsOnUpdate: on create, a name
// that is not a DNS label (for the kinds whose name becomes pods' names)
// and the template's warnings; on update, the template's warnings only
// when the generation changed (Pods: none).

// templateWarnings are a pod template's warnings under root.
func templateWarnings(root *field.Path, t *corev1.PodTemplateSpec) []string {
	if t == nil {
		return nil
	}
	return podSpecWarnings(root, &t.Spec, &t.ObjectMeta)
}

// hostnameWarning warns about a name that is not a DNS label; about is
// what upstream says the name is used in.
func hostnameWarning(name, about string) []string {
	msgs := utilvalidation.IsDNS1123Label(name)
	if len(msgs) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("metadata.name: this is used in %s, which can result in surprising behavior; a DNS label is recommended: %v", about, msgs)}
}

const podNamesAbout = "Pod names and hostnames"

func generationChanged(obj, old metav1.Object) bool {
	return obj.GetGeneration() != old.GetGeneration()
}

func podWarnings(obj, old runtime.Object) []string {
	if old != nil {
		return nil
	}
	pod := obj.(*corev1.Pod)
	w := hostnameWarning(pod.Name, "the Pod's hostname")
	return append(w, podSpecWarnings(nil, &pod.Spec, &pod.ObjectMeta)...)
}

// podTemplateWarnings: upstream warns on an update that bumped the
// generation, which a PodTemplate's does when the template changed.
func podTemplateWarnings(obj, old runtime.Object) []string {
	t := obj.(*corev1.PodTemplate)
	if old != nil && apiequality.Semantic.DeepEqual(t.Template, old.(*corev1.PodTemplate).Template) {
		return nil
	}
	return templateWarnings(field.NewPath("template"), &t.Template)
}

// replicationControllerWarnings: on update upstream gives the warnings of
// the old template (it passes the two templates the other way round).
func replicationControllerWarnings(obj, old runtime.Object) []string {
	rc := obj.(*corev1.ReplicationController)
	if old == nil {
		return append(hostnameWarning(rc.Name, podNamesAbout), templateWarnings(templatePath, rc.Spec.Template)...)
	}
	oldRC := old.(*corev1.ReplicationController)
	if !generationChanged(rc, oldRC) {
		return nil
	}
	return templateWarnings(templatePath, oldRC.Spec.Template)
}

func deploymentWarnings(obj, old runtime.Object) []string {
	d := obj.(*appsv1.Deployment)
	if old == nil {
		return append(hostnameWarning(d.Name, podNamesAbout), templateWarnings(templatePath, &d.Spec.Template)...)
	}
	if !generationChanged(d, old.(*appsv1.Deployment)) {
		return nil
	}
	return templateWarnings(templatePath, &d.Spec.Template)
}

func replicaSetWarnings(obj, old runtime.Object) []string {
	rs := obj.(*appsv1.ReplicaSet)
	if old == nil {
		return append(hostnameWarning(rs.Name, podNamesAbout), templateWarnings(templatePath, &rs.Spec.Template)...)
	}
	if !generationChanged(rs, old.(*appsv1.ReplicaSet)) {
		return nil
	}
	return templateWarnings(templatePath, &rs.Spec.Template)
}

// daemonSetWarnings: no name warning; an update warns when the template
// generation changed.
func daemonSetWarnings(obj, old runtime.Object) []string {
	ds := obj.(*appsv1.DaemonSet)
	if old != nil && templateGeneration(&ds.ObjectMeta) == templateGeneration(&old.(*appsv1.DaemonSet).ObjectMeta) {
		return nil
	}
	return templateWarnings(templatePath, &ds.Spec.Template)
}

// statefulSetWarnings: no name warning; the claim templates' fractional
// storage sizes and a negative revisionHistoryLimit on every write (an
// update's claim paths have upstream's "Spec" element).
func statefulSetWarnings(obj, old runtime.Object) []string {
	ss := obj.(*appsv1.StatefulSet)
	var w []string
	if old == nil || generationChanged(ss, old.(*appsv1.StatefulSet)) {
		w = templateWarnings(templatePath, &ss.Spec.Template)
	}
	for i := range ss.Spec.VolumeClaimTemplates {
		p := specPath.Child("volumeClaimTemplates").Index(i)
		if old != nil {
			p = p.Child("Spec")
		}
		w = append(w, claimSpecWarnings(p, &ss.Spec.VolumeClaimTemplates[i].Spec)...)
	}
	if l := ss.Spec.RevisionHistoryLimit; l != nil && *l < 0 {
		w = append(w, "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended")
	}
	return w
}

func jobWarnings(obj, old runtime.Object) []string {
	j := obj.(*batchv1.Job)
	if old == nil {
		return append(hostnameWarning(j.Name, podNamesAbout), jobSpecWarnings(specPath, &j.Spec)...)
	}
	if !generationChanged(j, old.(*batchv1.Job)) {
		return nil
	}
	return jobSpecWarnings(specPath, &j.Spec)
}

// cronJobWarnings: an update also warns about a time zone in the schedule
// (which only an update may keep), under upstream's path spec.spec.schedule.
func cronJobWarnings(obj, old runtime.Object) []string {
	cj := obj.(*batchv1.CronJob)
	p := specPath.Child("jobTemplate", "spec")
	if old == nil {
		return append(hostnameWarning(cj.Name, podNamesAbout), jobSpecWarnings(p, &cj.Spec.JobTemplate.Spec)...)
	}
	var w []string
	if generationChanged(cj, old.(*batchv1.CronJob)) {
		w = jobSpecWarnings(p, &cj.Spec.JobTemplate.Spec)
	}
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		w = append(w, "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, "+
			"see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")
	}
	return w
}

// jobSpecWarnings: an Indexed Job too large to track its failed indexes,
// then the template's warnings.
func jobSpecWarnings(p *field.Path, s *batchv1.JobSpec) []string {
	var w []string
	if s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion &&
		derefInt32(s.Completions) > 100_000 && derefInt32(s.Parallelism) > 10_000 {
		w = append(w, fmt.Sprintf("%s: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, "+
			"Kubernetes might not be able to track completedIndexes when a big number of indexes fail", p))
	}
	return append(w, templateWarnings(p.Child("template"), &s.Template)...)
}
