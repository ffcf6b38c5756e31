package controllers

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// Caches are the watch caches one set of controllers shares (client-go's
// shared informer factory): one per resource and Go type, fed by one watch
// of storage and decoding each stored revision once, whichever number of
// controllers read it. Each controller adds its own handlers (Shared); the
// objects are shared read-only. Caches are made for one run of the
// controllers: Start follows storage until its context ends. Make every
// reader before Start (as kube-controller-manager builds its controllers
// before it starts its informer factory): a reader added to a running
// cache hears of its contents at once, on its own goroutine, and of later
// changes on the follower's, so it must be ready for them when it adds
// its handlers.
type Caches struct {
	store storage.Store
	cat   *registry.Catalogue
	log   *slog.Logger

	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
	order   []*cacheEntry // in the order made, for Start
	ctx     context.Context
	// detect, when not nil, turns on every cache's mutation detector
	// (watchcache.Cache.DetectMutations) with this report.
	detect func(key string)
}

type cacheKey struct {
	prefix string
	typ    reflect.Type
}

type cacheEntry struct {
	prefix   string
	follower Follower
	check    func()
	started  bool
}

// MutationDetectorEnv names the environment variable that, set to
// "true", turns on every set of caches' mutation detector
// (DetectMutations), panicking at the first shared object found changed,
// as client-go's KUBE_CACHE_MUTATION_DETECTOR does: a debug mode for test
// runs, which doubles the controllers' decoding.
const MutationDetectorEnv = "ADMITD_CACHE_MUTATION_DETECTOR"

// NewCaches returns an empty set of caches of the resources of cat,
// followed in store.
func NewCaches(store storage.Store, cat *registry.Catalogue, log *slog.Logger) *Caches {
	cs := &Caches{store: store, cat: cat, log: log, entries: map[cacheKey]*cacheEntry{}}
	if os.Getenv(MutationDetectorEnv) == "true" {
		cs.detect = func(key string) {
			panic(fmt.Sprintf("a controller changed the shared cached object %s instead of a copy", key))
		}
	}
	return cs
}

// DetectMutations turns on the debug check that no controller changes a
// shared object (watchcache.Cache.DetectMutations) for every cache made
// after it, calling report with the key of a changed object. For tests.
func (cs *Caches) DetectMutations(report func(key string)) {
	cs.mu.Lock()
	cs.detect = report
	cs.mu.Unlock()
}

// CheckMutations compares every cached object with its stored bytes now
// (see DetectMutations).
func (cs *Caches) CheckMutations() {
	cs.mu.Lock()
	entries := append([]*cacheEntry(nil), cs.order...)
	cs.mu.Unlock()
	for _, e := range entries {
		e.check()
	}
}

// Shared returns the cache of the stored objects of gvr, decoded as T,
// made by the first caller and shared with the others, with the handler
// set h added (a cache that already has objects replays them to h as
// adds); an error when the catalogue does not serve gvr. A cache made
// after Start is followed at once.
func Shared[T any](cs *Caches, gvr schema.GroupVersionResource, h watchcache.Handlers[T]) (*watchcache.Cache[T], error) {
	res, ok := cs.cat.Lookup(gvr)
	if !ok {
		return nil, fmt.Errorf("%s are not served", gvr.Resource)
	}
	prefix := layout.ResourcePrefix(res)
	k := cacheKey{prefix: prefix, typ: reflect.TypeFor[T]()}
	cs.mu.Lock()
	e := cs.entries[k]
	if e != nil {
		cs.mu.Unlock()
		cache := e.follower.(*watchcache.Cache[T])
		cache.AddHandlers(h)
		return cache, nil
	}
	onError := func(key string, err error) { cs.log.Warn("decoding a stored object", "key", key, "err", err) }
	cache := watchcache.New(prefix, Decoder[T](res), h, onError)
	if cs.detect != nil {
		cache.DetectMutations(cs.detect)
	}
	e = &cacheEntry{prefix: prefix, follower: cache, check: cache.CheckMutations}
	cs.entries[k] = e
	cs.order = append(cs.order, e)
	if cs.ctx != nil {
		e.started = true
		go Follow(cs.ctx, cs.store, prefix, cache, cs.log)
	}
	cs.mu.Unlock()
	return cache, nil
}

// Start follows storage into every cache until ctx ends: those made so
// far, and those made later. Only the first call's ctx counts; later calls
// do nothing.
func (cs *Caches) Start(ctx context.Context) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.ctx != nil {
		return
	}
	cs.ctx = ctx
	for _, e := range cs.order {
		if !e.started {
			e.started = true
			go Follow(ctx, cs.store, e.prefix, e.follower, cs.log)
		}
	}
}

// NewCache is a watch cache of the stored objects of gvr, decoded as T,
// with its key prefix (what Follow feeds it from), for one controller
// alone; an error when the catalogue does not serve gvr.
func NewCache[T any](cat *registry.Catalogue, gvr schema.GroupVersionResource, h watchcache.Handlers[T], onError func(key string, err error)) (*watchcache.Cache[T], string, error) {
	res, ok := cat.Lookup(gvr)
	if !ok {
		return nil, "", fmt.Errorf("%s are not served", gvr.Resource)
	}
	prefix := layout.ResourcePrefix(res)
	return watchcache.New(prefix, Decoder[T](res), h, onError), prefix, nil
}

// Decoder decodes the stored objects of res into T, for a watch cache.
func Decoder[T any](res *registry.Resource) func(storage.KeyValue) (T, error) {
	return func(kv storage.KeyValue) (T, error) {
		var zero T
		obj, err := layout.Decode(res, kv)
		if err != nil {
			return zero, err
		}
		t, ok := obj.(T)
		if !ok {
			return zero, fmt.Errorf("%s decoded as %T", kv.Key, obj)
		}
		return t, nil
	}
}
