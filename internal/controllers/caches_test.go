package controllers

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// storePod writes a pod into store as the server stores it.
func storePod(t *testing.T, store storage.Store, cat *registry.Catalogue, name string) {
	t.Helper()
	res, _ := cat.Lookup(podsGVR)
	value, err := layout.Encode(&corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "a"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(context.Background(), layout.Key(res, "default", name), value); err != nil {
		t.Fatal(err)
	}
}

// seen records the names a handler set was told of.
type seen struct {
	mu    sync.Mutex
	added []string
}

func (s *seen) handlers() watchcache.Handlers[*corev1.Pod] {
	return watchcache.Handlers[*corev1.Pod]{Add: func(p *corev1.Pod) {
		s.mu.Lock()
		s.added = append(s.added, p.Name)
		s.mu.Unlock()
	}}
}

func (s *seen) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.added)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSharedCacheDecodesOnceForEveryReader: two readers of pods get the
// one cache and the same decoded objects, each its own handlers; a
// reader added after the cache synced hears of its contents as adds.
func TestSharedCacheDecodesOnceForEveryReader(t *testing.T) {
	store, cat := memory.New(), registry.NewCatalogue()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caches := NewCaches(store, cat, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var first, second, late seen
	a, err := Shared(caches, podsGVR, first.handlers())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Shared(caches, podsGVR, second.handlers())
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("Shared(pods) twice gave two caches, want one")
	}
	storePod(t, store, cat, "p1")
	caches.Start(ctx)
	caches.Start(ctx) // later calls do nothing
	<-a.Synced()
	storePod(t, store, cat, "p2")
	waitFor(t, "both handler sets to see p2", func() bool { return first.count() == 2 && second.count() == 2 })

	c, err := Shared(caches, podsGVR, late.handlers())
	if err != nil {
		t.Fatal(err)
	}
	if c != a {
		t.Fatalf("Shared(pods) after Start gave a new cache, want the running one")
	}
	if late.count() != 2 {
		t.Errorf("a handler set added to a synced cache heard of %v, want p1 and p2 replayed", late.added)
	}
	storePod(t, store, cat, "p3")
	waitFor(t, "the late handler set to see p3", func() bool { return late.count() == 3 })
	p1a, _ := a.Get("default", "p1")
	p1b, _ := b.Get("default", "p1")
	if p1a != p1b {
		t.Errorf("the readers got two decoded copies of p1, want one shared object")
	}
	if a.Revision() == 0 {
		t.Errorf("Revision() = 0 after three writes")
	}
}

// TestCacheMutationDetected: a controller that changes a shared object
// instead of a copy is reported, one that copies first is not.
func TestCacheMutationDetected(t *testing.T) {
	store, cat := memory.New(), registry.NewCatalogue()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caches := NewCaches(store, cat, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var mu sync.Mutex
	var reported []string
	caches.DetectMutations(func(key string) {
		mu.Lock()
		reported = append(reported, key)
		mu.Unlock()
	})
	pods, err := Shared(caches, podsGVR, watchcache.Handlers[*corev1.Pod]{})
	if err != nil {
		t.Fatal(err)
	}
	storePod(t, store, cat, "p1")
	caches.Start(ctx)
	<-pods.Synced()
	p, _ := pods.Get("default", "p1")
	cp := p.DeepCopy()
	cp.Labels["app"] = "copied"
	caches.CheckMutations()
	if len(reported) != 0 {
		t.Fatalf("changing a copy reported %v, want nothing", reported)
	}
	p.Labels["app"] = "changed in place"
	caches.CheckMutations()
	mu.Lock()
	defer mu.Unlock()
	res, _ := cat.Lookup(podsGVR)
	if want := layout.Key(res, "default", "p1"); len(reported) != 1 || reported[0] != want {
		t.Errorf("changing the shared object reported %v, want [%s]", reported, want)
	}
}
