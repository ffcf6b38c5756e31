package podwarnings

import (
	"math/rand"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// kindExtras sets, at random, the fields of obj's kind that its own
// warnings look at (a StatefulSet's claim templates and history limit, an
// Indexed Job's size, a CronJob's schedule).
func kindExtras(r *rand.Rand, obj runtime.Object) {
	jobSpec := func(s *batchv1.JobSpec) {
		if r.Intn(2) == 0 {
			s.CompletionMode = ptr.To(pick(r, []batchv1.CompletionMode{batchv1.IndexedCompletion, batchv1.NonIndexedCompletion}))
		}
		s.Completions = pick(r, []*int32{nil, ptr.To[int32](5), ptr.To[int32](100_001)})
		s.Parallelism = pick(r, []*int32{nil, ptr.To[int32](3), ptr.To[int32](10_001)})
	}
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		for i := r.Intn(3); i > 0; i-- {
			var c corev1.PersistentVolumeClaim
			c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(pick(r, quantities))}
			if r.Intn(2) == 0 {
				c.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(pick(r, quantities))}
			}
			o.Spec.VolumeClaimTemplates = append(o.Spec.VolumeClaimTemplates, c)
		}
		o.Spec.RevisionHistoryLimit = pick(r, []*int32{nil, ptr.To[int32](-1), ptr.To[int32](10)})
	case *batchv1.Job:
		jobSpec(&o.Spec)
	case *batchv1.CronJob:
		o.Spec.Schedule = pick(r, []string{"* * * * *", "TZ=UTC * * * * *", "CRON_TZ=Europe/Paris 0 * * * *"})
		jobSpec(&o.Spec.JobTemplate.Spec)
	}
}

// TestGeneratedWarningsLikeUpstream: generated pods, as a Pod and as the
// template of every kind, created and updated (the template changed or
// not), warn as upstream's strategies, in the same order.
func TestGeneratedWarningsLikeUpstream(t *testing.T) {
	r := rand.New(rand.NewSource(37))
	g := gen{r}
	c := newComparer(t)
	const pods = 1500
	for i := 0; i < pods && !t.Failed(); i++ {
		p := g.pod()
		p.Generation = 1
		for _, k := range kinds {
			obj := k.wrap(p)
			kindExtras(r, obj)
			c.compare(k, "create", obj, nil)
			next := p
			if r.Intn(3) > 0 {
				next = g.pod()
				next.Generation = 2
				if sameTemplate(p, next) {
					next.Generation = 1
				}
			}
			updated := k.wrap(next)
			kindExtras(r, updated)
			c.compare(k, "update", updated, obj)
		}
	}
	t.Logf("%d writes compared, %d with warnings, %d distinct warnings (numbers aside)", c.compared, c.warned, len(c.distinct))
	if c.warned < c.compared/2 || len(c.distinct) < 150 {
		t.Errorf("%d of %d writes warned, %d distinct warnings: the generator no longer reaches the warnings", c.warned, c.compared, len(c.distinct))
	}
}
