package admissionsource

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/memory"
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
	src.Start(ctx)
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
