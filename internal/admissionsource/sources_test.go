package admissionsource

import (
	"context"
	"fmt"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// TestSourcesCreateAndStartCachesOnFirstUse: For makes one cache per
// resource version, Handles knows them by group and resource, and a cache
// made after Start runs at once.
func TestSourcesCreateAndStartCachesOnFirstUse(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	src := NewSources(store, registry.NewCatalogue())
	if src.Handles(Secrets) {
		t.Fatal("Handles(secrets) = true before any cache, want false")
	}
	ns := src.For(Namespaces)
	if src.For(Namespaces) != ns {
		t.Error("For(namespaces) made a second cache")
	}
	if src.For(corev1.SchemeGroupVersion.WithResource("nosuchthings")) != nil {
		t.Error("For(an unserved resource) != nil")
	}
	if !src.Handles(corev1.SchemeGroupVersion.WithResource("namespaces")) {
		t.Error("Handles(namespaces) = false with a namespace cache")
	}
	src.Start(ctx, nil)
	for _, gvr := range []schema.GroupVersionResource{ServiceAccounts, LimitRanges, ResourceQuotas, Nodes, PriorityClasses, RuntimeClasses, StorageClasses, IngressClasses} {
		if src.For(gvr) == nil {
			t.Errorf("For(%v) = nil, want a cache", gvr)
		}
	}
	if err := src.WaitSynced(ctx); err != nil {
		t.Fatalf("caches made before and after Start never synced: %v", err)
	}
}

// TestSourcesObserveInAnotherVersion: a write observed in a version other
// than the cache's is read again from storage, at once.
func TestSourcesObserveInAnotherVersion(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	src := NewSources(store, registry.NewCatalogue())
	v2 := autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers")
	c := src.For(v2)
	if err := c.relist(ctx); err != nil { // synced, with no watch running
		t.Fatal(err)
	}
	key := "/registry/autoscaling/horizontalpodautoscalers/a/h"
	kv, err := store.Create(ctx, key, []byte(`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h","namespace":"a"},"spec":{"maxReplicas":3,"scaleTargetRef":{"kind":"Deployment","name":"d"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	v1 := autoscalingv1.SchemeGroupVersion.WithResource("horizontalpodautoscalers")
	written := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "a", ResourceVersion: fmt.Sprint(kv.ModRevision)}}
	if !src.Handles(v1) {
		t.Fatal("Handles(v1) = false with a v2 cache of the same resource")
	}
	src.Observe(ctx, v1, false, written)
	obj, err := c.Get(ctx, "a", "h")
	if err != nil {
		t.Fatalf("Get right after a v1 write = %v", err)
	}
	if hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler); !ok || hpa.Spec.MaxReplicas != 3 {
		t.Errorf("Get right after a v1 write = %T %v, want the stored v2 object", obj, obj)
	}
	if _, _, err := store.Delete(ctx, key, 0); err != nil {
		t.Fatal(err)
	}
	src.Observe(ctx, v1, true, written)
	if _, err := c.Get(ctx, "a", "h"); !apierrors.IsNotFound(err) {
		t.Errorf("Get right after a v1 delete = %v, want NotFound", err)
	}
}

// TestListerReadsTyped: a typed lister gets and lists through its cache,
// before and after the cache runs, and answers NotFound for a resource not
// served.
func TestListerReadsTyped(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	src := NewSources(store, registry.NewCatalogue())
	sa := ListerFor[*corev1.ServiceAccount](src, ServiceAccounts)
	if _, err := store.Create(ctx, "/registry/core/serviceaccounts/a/builder", []byte(`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"builder","namespace":"a"}}`)); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		if got, err := sa.Get(ctx, "a", "builder"); err != nil || got.Name != "builder" {
			t.Errorf("%s: Get = %v, %v; want builder", when, got, err)
		}
		if got, err := sa.List(ctx, "", nil); err != nil || len(got) != 1 {
			t.Errorf("%s: List = %d items, %v; want 1", when, len(got), err)
		}
	}
	check("before Start")
	src.Start(ctx, nil)
	if err := src.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	check("after sync")
	missing := ListerFor[*corev1.ServiceAccount](src, corev1.SchemeGroupVersion.WithResource("nosuchthings"))
	if _, err := missing.Get(ctx, "a", "x"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a resource not served = %v, want NotFound", err)
	}
}

// TestResourceCacheReadsAsTheObjectCache: a ResourceCache made before its
// resource's cache exists finds it on first use and then reads what
// GetCachedObject and ListCachedObjects read; one of an unserved resource
// answers NotFound and lists nothing; the two versions of a resource are
// told apart.
func TestResourceCacheReadsAsTheObjectCache(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	src := NewSources(store, registry.NewCatalogue())
	objects := src.Objects()
	accounts := objects.ResourceCache(ServiceAccounts)
	key := layout.Key(src.For(ServiceAccounts).Resource(), "a", "default")
	if _, err := store.Create(ctx, key, []byte(`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default","namespace":"a"}}`)); err != nil {
		t.Fatal(err)
	}
	src.Start(ctx, nil)
	if err := src.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := accounts.Get(ctx, "a", "default")
	want, wantErr := objects.GetCachedObject(ctx, ServiceAccounts, "a", "default")
	if err != nil || wantErr != nil || got != want {
		t.Errorf("Get = %v, %v; GetCachedObject = %v, %v", got, err, want, wantErr)
	}
	list, err := accounts.List(ctx, "a", nil)
	if err != nil || len(list) != 1 || list[0] != want {
		t.Errorf("List = %v, %v; want the one account", list, err)
	}
	if _, err := accounts.Get(ctx, "a", "other"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a missing account = %v, want NotFound", err)
	}
	hpav1 := objects.ResourceCache(autoscalingv1.SchemeGroupVersion.WithResource("horizontalpodautoscalers"))
	hpav2 := objects.ResourceCache(autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers"))
	if hpav1.(*resourceCache).cache() == hpav2.(*resourceCache).cache() {
		t.Error("two versions of a resource share a cache")
	}
	none := objects.ResourceCache(corev1.SchemeGroupVersion.WithResource("nosuchthings"))
	if _, err := none.Get(ctx, "a", "x"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of an unserved resource = %v, want NotFound", err)
	}
	if objs, err := none.List(ctx, "a", nil); err != nil || objs != nil {
		t.Errorf("List of an unserved resource = %v, %v; want nothing", objs, err)
	}
}

// TestSourcesSyncedCoversTheCachesAtStart: Synced, /readyz's
// informer-sync, is false before Start and covers the caches that existed
// then; one made later (for a policy's params, for a controller) does not
// make a ready server unready while it lists.
func TestSourcesSyncedCoversTheCachesAtStart(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	src := NewSources(store, registry.NewCatalogue())
	src.For(Namespaces)
	if src.Synced() {
		t.Fatal("Synced() = true before Start")
	}
	ctx, cancel := context.WithCancel(t.Context())
	src.Start(ctx, nil)
	if err := src.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	if !src.Synced() {
		t.Fatal("Synced() = false once the namespace cache listed")
	}
	cancel() // caches made from now on never list
	late := src.For(Secrets)
	time.Sleep(10 * time.Millisecond)
	if late.Synced() {
		t.Fatal("a cache made after its context ended listed; the test proves nothing")
	}
	if !src.Synced() {
		t.Error("Synced() = false because of a cache made after Start, want true")
	}
}
