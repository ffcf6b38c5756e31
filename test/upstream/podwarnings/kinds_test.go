// Package podwarnings compares the client warnings admitd gives a write of
// a Pod or of a kind with a pod template with those of upstream's
// strategies (WarningsOnCreate, WarningsOnUpdate, hence pkg/api/pod's
// GetWarningsForPod and GetWarningsForPodTemplate), in order.
package podwarnings

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/podtemplate"
	"k8s.io/kubernetes/pkg/registry/core/replicationcontroller"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

// warner is what the comparison needs of an upstream strategy.
type warner interface {
	WarningsOnCreate(ctx context.Context, obj runtime.Object) []string
	WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string
}

// kind is one kind with a pod spec: how to wrap a pod (its name, metadata
// and spec) into an object of the kind, and where its template is.
type kind struct {
	name     string
	gvr      schema.GroupVersionResource
	upstream warner
	// root is the template's path ("" for a Pod), before "spec.nodeSelector".
	root string
	wrap func(p *corev1.Pod) runtime.Object
}

func template(p *corev1.Pod) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}, Annotations: p.Annotations},
		Spec: p.Spec}
}

func meta(p *corev1.Pod) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: p.Name, Namespace: "default", Generation: p.Generation}
}

var kinds = []kind{
	{"Pod", corev1.SchemeGroupVersion.WithResource("pods"), pod.Strategy, "",
		func(p *corev1.Pod) runtime.Object { return p.DeepCopy() }},
	{"PodTemplate", corev1.SchemeGroupVersion.WithResource("podtemplates"), podtemplate.Strategy, "template.",
		func(p *corev1.Pod) runtime.Object {
			return &corev1.PodTemplate{ObjectMeta: meta(p), Template: template(p)}
		}},
	{"ReplicationController", corev1.SchemeGroupVersion.WithResource("replicationcontrollers"), replicationcontroller.Strategy, "spec.template.",
		func(p *corev1.Pod) runtime.Object {
			t := template(p)
			return &corev1.ReplicationController{ObjectMeta: meta(p), Spec: corev1.ReplicationControllerSpec{Template: &t}}
		}},
	{"Deployment", appsv1.SchemeGroupVersion.WithResource("deployments"), deployment.Strategy, "spec.template.",
		func(p *corev1.Pod) runtime.Object {
			return &appsv1.Deployment{ObjectMeta: meta(p), Spec: appsv1.DeploymentSpec{Template: template(p)}}
		}},
	{"ReplicaSet", appsv1.SchemeGroupVersion.WithResource("replicasets"), replicaset.Strategy, "spec.template.",
		func(p *corev1.Pod) runtime.Object {
			return &appsv1.ReplicaSet{ObjectMeta: meta(p), Spec: appsv1.ReplicaSetSpec{Template: template(p)}}
		}},
	{"DaemonSet", appsv1.SchemeGroupVersion.WithResource("daemonsets"), daemonset.Strategy, "spec.template.",
		func(p *corev1.Pod) runtime.Object {
			m := meta(p)
			// upstream's internal spec.templateGeneration, in v1
			m.Annotations = map[string]string{appsv1.DeprecatedTemplateGeneration: strconv.FormatInt(p.Generation, 10)}
			return &appsv1.DaemonSet{ObjectMeta: m, Spec: appsv1.DaemonSetSpec{Template: template(p)}}
		}},
	{"StatefulSet", appsv1.SchemeGroupVersion.WithResource("statefulsets"), statefulset.Strategy, "spec.template.",
		func(p *corev1.Pod) runtime.Object {
			return &appsv1.StatefulSet{ObjectMeta: meta(p), Spec: appsv1.StatefulSetSpec{Template: template(p)}}
		}},
	{"Job", batchv1.SchemeGroupVersion.WithResource("jobs"), job.Strategy, "spec.template.",
		func(p *corev1.Pod) runtime.Object {
			return &batchv1.Job{ObjectMeta: meta(p), Spec: batchv1.JobSpec{Template: template(p)}}
		}},
	{"CronJob", batchv1.SchemeGroupVersion.WithResource("cronjobs"), cronjob.Strategy, "spec.jobTemplate.spec.template.",
		func(p *corev1.Pod) runtime.Object {
			return &batchv1.CronJob{ObjectMeta: meta(p), Spec: batchv1.CronJobSpec{Schedule: "* * * * *",
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template(p)}}}}
		}},
}

// comparer runs writes through both sides.
type comparer struct {
	t   *testing.T
	cat *registry.Catalogue
	// compared and warned count the writes compared and those that warned.
	compared, warned int
	distinct         map[string]bool
}

func newComparer(t *testing.T) *comparer {
	return &comparer{t: t, cat: registry.NewCatalogue(), distinct: map[string]bool{}}
}

// compare runs a create (old nil) or an update of obj through upstream's
// strategy of k and admitd's Warnings hook and reports a difference.
func (c *comparer) compare(k kind, label string, obj, old runtime.Object) []string {
	c.t.Helper()
	res, ok := c.cat.Lookup(k.gvr)
	if !ok {
		c.t.Fatalf("%s not served", k.gvr)
	}
	ctx := context.Background()
	var want, got []string
	if old == nil {
		want = k.upstream.WarningsOnCreate(ctx, updiff.ToInternal(c.t, obj))
		got = res.Warnings(obj.DeepCopyObject(), nil)
	} else {
		want = k.upstream.WarningsOnUpdate(ctx, updiff.ToInternal(c.t, obj), updiff.ToInternal(c.t, old))
		got = res.Warnings(obj.DeepCopyObject(), old.DeepCopyObject())
	}
	want = sortNodeSelectorWarnings(want, k.root)
	c.compared++
	if len(want) > 0 {
		c.warned++
	}
	for _, w := range want {
		c.distinct[indexless(w)] = true
	}
	if !slices.Equal(got, want) {
		c.t.Errorf("%s %s: warnings\n  %q\nupstream\n  %q\nobject: %+v\nold: %+v", k.name, label, got, want, obj, old)
	}
	return want
}

// sortNodeSelectorWarnings sorts the warnings about node selector keys,
// which come together and in map order upstream (admitd gives them in key
// order).
func sortNodeSelectorWarnings(w []string, root string) []string {
	first := slices.IndexFunc(w, func(s string) bool { return strings.HasPrefix(s, root+"spec.nodeSelector[") })
	if first < 0 {
		return w
	}
	n := first
	for n < len(w) && strings.HasPrefix(w[n], root+"spec.nodeSelector[") {
		n++
	}
	slices.Sort(w[first:n])
	return w
}

// indexless is a warning without its numbers, to count kinds of warnings.
func indexless(w string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, w)
}

// sameTemplate says whether an update leaves the template as it was (a
// PodTemplate's generation grows only when it changed).
func sameTemplate(a, b *corev1.Pod) bool {
	return apiequality.Semantic.DeepEqual(a.Spec, b.Spec) && apiequality.Semantic.DeepEqual(a.Annotations, b.Annotations)
}
