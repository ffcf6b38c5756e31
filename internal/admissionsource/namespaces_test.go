package admissionsource

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// TestNamespaceLookupFollowsStorage: a started lookup returns the same
// decoded namespace while it is unchanged and follows updates and deletes
// made to storage.
func TestNamespaceLookupFollowsStorage(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	src := NewSources(store, registry.NewCatalogue())
	l := src.Namespaces()
	key := "/registry/core/namespaces/team"
	kv, err := store.Create(ctx, key, []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team","labels":{"v":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	src.Start(ctx, nil)
	if err := src.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	first, err := l.GetNamespace(ctx, "team")
	if err != nil || first.Labels["v"] != "1" {
		t.Fatalf("GetNamespace = %v, %v; want label v=1", first, err)
	}
	if again, _ := l.GetNamespace(ctx, "team"); again != first {
		t.Errorf("an unchanged namespace was decoded again")
	}
	if _, err := store.Update(ctx, key, []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team","labels":{"v":"2"}}}`), kv.ModRevision); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { ns, err := l.GetNamespace(ctx, "team"); return err == nil && ns.Labels["v"] == "2" })
	if _, _, err := store.Delete(ctx, key, 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, err := l.GetNamespace(ctx, "team"); return apierrors.IsNotFound(err) })
}

// BenchmarkGetNamespace: the lookup of every namespaced write, from
// storage (an unstarted cache: each call reads and decodes) and from a
// synced cache.
func BenchmarkGetNamespace(b *testing.B) {
	for _, started := range []bool{false, true} {
		name := map[bool]string{false: "storage", true: "cache"}[started]
		b.Run(name, func(b *testing.B) {
			store := memory.New()
			b.Cleanup(func() { _ = store.Close() })
			if _, err := store.Create(b.Context(), "/registry/core/namespaces/team", []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}}`)); err != nil {
				b.Fatal(err)
			}
			src := NewSources(store, registry.NewCatalogue())
			l := src.Namespaces()
			if started {
				src.Start(b.Context(), nil)
				if err := src.WaitSynced(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := l.GetNamespace(b.Context(), "team"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// TestNamespaceLookupReadsStorageOnMiss: a namespace stored after the
// cache stopped hearing of changes (its watches broken) is still found,
// read from storage, and one never stored is NotFound.
func TestNamespaceLookupReadsStorageOnMiss(t *testing.T) {
	ctx := t.Context()
	mem := memory.New()
	t.Cleanup(func() { _ = mem.Close() })
	store := &breakableStore{Store: mem}
	src := NewSources(store, registry.NewCatalogue())
	l := src.Namespaces()
	src.Start(ctx, nil)
	if err := src.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	store.failWatches(true)
	if _, err := mem.Create(ctx, "/registry/core/namespaces/late", []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"late"}}`)); err != nil {
		t.Fatal(err)
	}
	ns, err := l.GetNamespace(ctx, "late")
	if err != nil || ns.Name != "late" {
		t.Fatalf("GetNamespace(late) = %v, %v; want it read from storage", ns, err)
	}
	if _, err := l.GetNamespace(ctx, "never"); !apierrors.IsNotFound(err) {
		t.Fatalf("GetNamespace(never) = %v, want NotFound", err)
	}
}
