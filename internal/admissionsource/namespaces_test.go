package admissionsource

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/memory"
)

// TestNamespaceLookupDecodesOnlyChanges: the lookup reuses a decoded
// namespace while its revision is unchanged and never returns a stale one.
func TestNamespaceLookupDecodesOnlyChanges(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	l := NewNamespaceLookup(store, registry.NewCatalogue())
	key := "/registry/core/namespaces/team"
	kv, err := store.Create(ctx, key, []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team","labels":{"v":"1"}}}`))
	if err != nil {
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
	if got, err := l.GetNamespace(ctx, "team"); err != nil || got.Labels["v"] != "2" {
		t.Errorf("GetNamespace after an update = %v, %v; want label v=2", got, err)
	}
	if _, _, err := store.Delete(ctx, key, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := l.GetNamespace(ctx, "team"); !apierrors.IsNotFound(err) {
		t.Errorf("GetNamespace after a delete = %v, want NotFound", err)
	}
}
