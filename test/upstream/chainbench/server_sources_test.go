package chainbench

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// serverSources is the cluster as admitd serve reads it: the objects stored
// in its layout, read through the server's watch-fed caches
// (internal/admissionsource), started and synced — the counterpart of
// upstream's informers. The admissiontest.Cluster stand-in the other
// variant reads sorts keys on every list, which the server does not.
func serverSources(tb testing.TB) (admission.PluginContext, *admissionsource.Sources) {
	ctx := tb.Context()
	store, cat := memory.New(), registry.NewCatalogue()
	for _, obj := range cluster() {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			tb.Fatal(err)
		}
		gvk := gvks[0]
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		gvr, _ := meta.UnsafeGuessKindToResource(gvk)
		res, ok := cat.Lookup(gvr)
		if !ok {
			tb.Fatalf("no resource %v", gvr)
		}
		raw, err := layout.Encode(obj)
		if err != nil {
			tb.Fatal(err)
		}
		m, _ := meta.Accessor(obj)
		if _, err := store.Create(ctx, layout.Key(res, m.GetNamespace(), m.GetName()), raw); err != nil {
			tb.Fatal(err)
		}
	}
	src := admissionsource.NewSources(store, cat)
	src.Start(ctx, nil)
	return admission.PluginContext{Context: ctx, Namespaces: src.Namespaces(), Objects: admissionsource.NewObjectLookup(store, cat),
		Schema: admissionsource.NewSchema(cat), Cache: src.Objects()}, src
}

// newServerChain is newAdmitdChainOver the server's sources, warmed: one
// pod admitted so that every cache the plugins read exists, then each has
// listed once, as on a running server.
func newServerChain(tb testing.TB, reg *admission.Registry, names []string) func(*corev1.Pod) error {
	pc, src := serverSources(tb)
	admit := newAdmitdChainOver(tb, reg, names, pc)
	if err := admit(pod()); err != nil {
		tb.Fatal(err)
	}
	if err := src.WaitSynced(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	return admit
}
