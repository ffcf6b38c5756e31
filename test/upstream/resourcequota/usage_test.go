package resourcequota

import (
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upquotav1 "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/quota/v1/evaluator/core"

	"github.com/admitd/admitd/pkg/quota"
)

var widgets = schema.GroupResource{Group: "example.com", Resource: "widgets"}

// world is a namespace of generated objects, listed for both sides.
type world struct {
	objs map[schema.GroupResource][]runtime.Object
}

func (g gen) world(n int) world {
	w := world{objs: map[schema.GroupResource][]runtime.Object{}}
	for i := 0; i < n; i++ {
		res := resources[g.r.IntN(len(resources))]
		w.objs[res.gvr.GroupResource()] = append(w.objs[res.gvr.GroupResource()], g.object(res.gvr.Resource, i))
	}
	return w
}

func (w world) list(gr schema.GroupResource, _ string) ([]runtime.Object, error) {
	return w.objs[gr], nil
}

// upstreamRegistry is kube-controller-manager's evaluators over listers of
// the world, with an object count for widgets.
func (w world) upstreamRegistry(t testing.TB) upquotav1.Registry {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	for _, res := range resources[:5] { // all but widgets
		inf, err := f.ForResource(res.gvr)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range w.objs[res.gvr.GroupResource()] {
			// upstream's pod usage adds the overhead to pod-level
			// resources in place: it gets its own copies
			if err := inf.Informer().GetIndexer().Add(o.DeepCopyObject()); err != nil {
				t.Fatal(err)
			}
		}
	}
	listers := func(gvr schema.GroupVersionResource) (cache.GenericLister, error) {
		inf, err := f.ForResource(gvr)
		if err != nil {
			return nil, err
		}
		return inf.Lister(), nil
	}
	evals, err := core.NewEvaluators(listers, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	evals = append(evals, generic.NewObjectCountEvaluator(widgets, func(string) ([]runtime.Object, error) { return w.objs[widgets], nil }, ""))
	return generic.NewRegistry(evals)
}

// TestEvaluatorFigures compares, object by object, each evaluator's usage,
// whether each generated quota matches the object, and the scopes it
// matches; then the usage summed over the namespace for each quota, as the
// quota controller computes status.used.
func TestEvaluatorFigures(t *testing.T) {
	g := gen{r: rand.New(rand.NewPCG(7, 11))}
	ourReg := quota.NewRegistry(ourOptions)
	objects, quotas := 0, 0
	for round := 0; round < 40; round++ {
		w := g.world(100)
		upReg := w.upstreamRegistry(t)
		var qs []*corev1.ResourceQuota
		for i := 0; i < 10; i++ {
			res := resources[g.r.IntN(len(resources))].gvr.Resource
			qs = append(qs, g.quota(i, res))
		}
		for gr, objs := range w.objs {
			ours, theirs := ourReg.For(gr), upReg.Get(gr)
			if theirs == nil {
				theirs = generic.NewObjectCountEvaluator(gr, nil, "")
			}
			for _, o := range objs {
				objects++
				compareObject(t, ours, theirs, o, qs)
			}
		}
		for _, q := range qs {
			quotas++
			got, gerr := ourReg.Usage(q, q.Spec.Hard, w.list)
			want, werr := upquotav1.CalculateUsage("test", q.Spec.Scopes, q.Spec.Hard, upReg, q.Spec.ScopeSelector)
			if (gerr == nil) != (werr == nil) || !quota.Equal(got, want) {
				t.Errorf("round %d quota %s (hard %s, scopes %v %v): used\n admitd   = %s (%v)\n upstream = %s (%v)", round, q.Name,
					quota.FormatList(q.Spec.Hard), q.Spec.Scopes, q.Spec.ScopeSelector, quota.FormatList(got), gerr, quota.FormatList(want), werr)
			}
		}
	}
	t.Logf("%d objects, %d summed quotas", objects, quotas)
}

// compareObject compares the figures of one object; admitd's evaluator
// must leave it as it was.
func compareObject(t *testing.T, ours quota.Evaluator, theirs upquotav1.Evaluator, o runtime.Object, qs []*corev1.ResourceQuota) {
	t.Helper()
	before := o.DeepCopyObject()
	defer func() {
		if !equality.Semantic.DeepEqual(before, o) {
			t.Errorf("admitd's evaluator changed %v", o)
		}
	}()
	name := o.(interface{ GetName() string }).GetName()
	got, gerr := ours.Usage(o)
	want, werr := theirs.Usage(o.DeepCopyObject())
	if (gerr == nil) != (werr == nil) || !quota.Equal(got, want) {
		t.Errorf("%s: usage\n admitd   = %s (%v)\n upstream = %s (%v)", name, quota.FormatList(got), gerr, quota.FormatList(want), werr)
	}
	for _, q := range qs {
		gm, gerr := ours.Matches(q, o)
		wm, werr := theirs.Matches(q, o.DeepCopyObject())
		if gm != wm || (gerr == nil) != (werr == nil) {
			t.Errorf("%s: Matches(%s) = %v, %v; upstream %v, %v", name, q.Name, gm, gerr, wm, werr)
		}
		sels := quota.QuotaSelectors(q)
		gs, gerr := ours.MatchingScopes(o, sels)
		ws, werr := theirs.MatchingScopes(o.DeepCopyObject(), sels)
		if len(gs) != len(ws) || (gerr == nil) != (werr == nil) {
			t.Errorf("%s: MatchingScopes(%s) = %v, %v; upstream %v, %v", name, q.Name, gs, gerr, ws, werr)
		}
		names := quota.Names(q.Status.Hard)
		if gr, wr := ours.MatchingResources(names), theirs.MatchingResources(names); len(gr) != len(wr) {
			t.Errorf("%s: MatchingResources(%v) = %v; upstream %v", name, names, gr, wr)
		}
	}
}
