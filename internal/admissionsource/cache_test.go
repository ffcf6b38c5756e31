package admissionsource

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

var configMaps = corev1.SchemeGroupVersion.WithResource("configmaps")

// instance writes configmaps as an API server does: to storage, then
// through its observer, as a write made on this instance.
type instance struct {
	t     *testing.T
	store storage.Store
	res   *registry.Resource
	cache *Cache // nil: another instance, whose writes reach the cache only through the watch
}

func newInstance(t *testing.T, store storage.Store, c *Cache) *instance {
	res, _ := registry.NewCatalogue().Lookup(configMaps)
	return &instance{t: t, store: store, res: res, cache: c}
}

func configMapJSON(ns, name, v string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q,"labels":{"v":%q}},"data":{"v":%q}}`, name, ns, v, v)
}

// put creates or updates ns/name with value v and returns its revision.
func (in *instance) put(ns, name, v string) int64 {
	ctx := context.Background()
	key := layout.Key(in.res, ns, name)
	for {
		kv, err := in.store.Update(ctx, key, configMapJSON(ns, name, v), 0)
		if isNotFound(err) {
			kv, err = in.store.Create(ctx, key, configMapJSON(ns, name, v))
		}
		if errors.Is(err, storage.ErrKeyExists) {
			continue // created meanwhile by another writer
		}
		if err != nil {
			in.t.Error(err)
			return 0
		}
		in.observe(false, kv)
		return kv.ModRevision
	}
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, storage.ErrNotFound) }

// del deletes ns/name and returns the revision it had, 0 if it did not
// exist; the observer gets the deleted object at that revision, as the
// API's delete passes it.
func (in *instance) del(ns, name string) int64 {
	prev, _, err := in.store.Delete(context.Background(), layout.Key(in.res, ns, name), 0)
	if isNotFound(err) {
		return 0
	}
	if err != nil {
		in.t.Error(err)
		return 0
	}
	in.observe(true, prev)
	return prev.ModRevision
}

func (in *instance) observe(deleted bool, kv storage.KeyValue) {
	if in.cache == nil {
		return
	}
	obj, err := layout.Decode(in.res, kv)
	if err != nil {
		in.t.Error(err)
		return
	}
	in.cache.Observe(context.Background(), "v1", deleted, obj)
}

func newConfigMapCache(t *testing.T) (*memory.Store, *Cache) {
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	res, _ := registry.NewCatalogue().Lookup(configMaps)
	return store, NewCache(store, res)
}

func dataOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	return obj.(*corev1.ConfigMap).Data["v"]
}

// TestCacheReadsStorageUntilSynced: an unstarted cache answers from storage.
func TestCacheReadsStorageUntilSynced(t *testing.T) {
	store, c := newConfigMapCache(t)
	other := newInstance(t, store, nil)
	other.put("a", "x", "1")
	if c.Synced() {
		t.Fatal("Synced() = true before any list")
	}
	if obj, err := c.Get(t.Context(), "a", "x"); err != nil || dataOf(t, obj) != "1" {
		t.Errorf("Get before sync = %v, %v; want v=1 from storage", obj, err)
	}
	if objs, err := c.List(t.Context(), "a", nil); err != nil || len(objs) != 1 {
		t.Errorf("List before sync = %d objects, %v; want 1", len(objs), err)
	}
}

// TestCacheReadYourWrites: with no watch running, a write observed on this
// instance is seen at once, and one made elsewhere is not (the test can
// fail); the watch's later copy of the observed write is not decoded again.
func TestCacheReadYourWrites(t *testing.T) {
	ctx := t.Context()
	store, c := newConfigMapCache(t)
	if err := c.relist(ctx); err != nil {
		t.Fatal(err)
	}
	here, other := newInstance(t, store, c), newInstance(t, store, nil)
	here.put("a", "mine", "1")
	other.put("a", "theirs", "1")
	mine, err := c.Get(ctx, "a", "mine")
	if err != nil || dataOf(t, mine) != "1" {
		t.Fatalf("Get(mine) right after the write = %v, %v; want v=1", mine, err)
	}
	if _, err := c.Get(ctx, "a", "theirs"); !apierrors.IsNotFound(err) {
		t.Fatalf("Get(theirs) with no watch = %v, want NotFound", err)
	}
	go c.Run(ctx, nil)
	waitFor(t, func() bool { _, err := c.Get(ctx, "a", "theirs"); return err == nil })
	if again, _ := c.Get(ctx, "a", "mine"); again != mine {
		t.Errorf("the watch replaced the observed object with a copy at the same revision")
	}
	here.del("a", "mine")
	if _, err := c.Get(ctx, "a", "mine"); !apierrors.IsNotFound(err) {
		t.Errorf("Get right after a delete = %v, want NotFound", err)
	}
}

// TestCacheDeleteNotUndoneByOlderEvents: a delete observed before the watch
// delivered the update it deleted leaves a tombstone; the late update does
// not bring the object back.
func TestCacheDeleteNotUndoneByOlderEvents(t *testing.T) {
	ctx := t.Context()
	store, c := newConfigMapCache(t)
	here := newInstance(t, store, c)
	other := newInstance(t, store, nil)
	here.put("a", "x", "1")
	if err := c.relist(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := store.Watch(ctx, c.prefix, c.rev)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	other.put("a", "x", "2") // not yet seen by the cache
	here.del("a", "x")
	if _, err := c.Get(ctx, "a", "x"); !apierrors.IsNotFound(err) {
		t.Fatalf("Get after the delete = %v, want NotFound", err)
	}
	for range 2 {
		c.applyEvent(<-w.Events())
		if obj, err := c.Get(ctx, "a", "x"); !apierrors.IsNotFound(err) {
			t.Fatalf("Get after watch event at revision %d = %v, %v; want NotFound", c.rev, obj, err)
		}
	}
	if len(c.gone) != 0 {
		t.Errorf("tombstones after the watch passed the delete = %v, want none", c.gone)
	}
	here.put("a", "x", "3")
	if obj, err := c.Get(ctx, "a", "x"); err != nil || dataOf(t, obj) != "3" {
		t.Errorf("Get after re-creating = %v, %v; want v=3", obj, err)
	}
}

// TestCacheListTakenBeforeADeleteDoesNotUndoIt: a list read before a delete
// observed here, and applied after it, does not bring the object back.
func TestCacheListTakenBeforeADeleteDoesNotUndoIt(t *testing.T) {
	ctx := t.Context()
	store, c := newConfigMapCache(t)
	here := newInstance(t, store, c)
	here.put("a", "x", "1")
	if err := c.relist(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := store.List(ctx, c.prefix, storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	here.del("a", "x")
	c.replace(page)
	if obj, err := c.Get(ctx, "a", "x"); !apierrors.IsNotFound(err) {
		t.Errorf("Get after a list older than the delete = %v, %v; want NotFound", obj, err)
	}
}

// TestCacheRewatchesAfterWatchError: when the watch ends, the cache
// watches again from the last revision it applied, without listing, and
// catches up with what was written meanwhile.
func TestCacheRewatchesAfterWatchError(t *testing.T) {
	ctx := t.Context()
	store, c, other := newBreakableCache(t)
	store.failWatches(true)
	other.put("a", "during", "1")
	store.failWatches(false)
	waitFor(t, func() bool { _, err := c.Get(ctx, "a", "during"); return err == nil })
	if n := c.relists.Load(); n != 1 {
		t.Errorf("lists = %d, want 1 (history was retained)", n)
	}
}

// TestCacheRelistsAfterCompaction: when the revision to watch from was
// compacted while the watch was down, the cache lists again and has every
// change made meanwhile, deletes included.
func TestCacheRelistsAfterCompaction(t *testing.T) {
	ctx := t.Context()
	store, c, other := newBreakableCache(t)
	other.put("a", "gone", "1")
	waitFor(t, func() bool { _, err := c.Get(ctx, "a", "gone"); return err == nil })
	store.failWatches(true)
	other.del("a", "gone")
	rev := other.put("a", "new", "1")
	if err := store.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	store.failWatches(false)
	waitFor(t, func() bool { _, err := c.Get(ctx, "a", "new"); return err == nil })
	if _, err := c.Get(ctx, "a", "gone"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of an object deleted before the compaction = %v, want NotFound", err)
	}
	if n := c.relists.Load(); n != 2 {
		t.Errorf("lists = %d, want 2", n)
	}
}

// newBreakableCache returns a running, synced configmap cache over a store
// whose watches can be broken, and another instance writing to it.
func newBreakableCache(t *testing.T) (*breakableStore, *Cache, *instance) {
	store := &breakableStore{Store: memory.New()}
	t.Cleanup(func() { _ = store.Close() })
	res, _ := registry.NewCatalogue().Lookup(configMaps)
	c := NewCache(store, res)
	other := newInstance(t, store, nil)
	other.put("x", "first", "1") // a list at revision 0 would be watched from "now"
	go c.Run(t.Context(), nil)
	if err := c.WaitSynced(t.Context()); err != nil {
		t.Fatal(err)
	}
	return store, c, other
}

// breakableStore ends every watch with an error while broken, and refuses
// new ones.
type breakableStore struct {
	storage.Store
	mu     sync.Mutex
	broken bool
	live   []storage.Watcher
}

func (s *breakableStore) Watch(ctx context.Context, prefix string, after int64) (storage.Watcher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return nil, storage.ErrClosed
	}
	w, err := s.Store.Watch(ctx, prefix, after)
	if err == nil {
		s.live = append(s.live, w)
	}
	return w, err
}

func (s *breakableStore) failWatches(broken bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broken = broken
	for _, w := range s.live {
		w.Stop()
	}
	s.live = nil
}

// TestCacheEqualsStorageAfterRandomWrites: concurrent writers, here and on
// another instance, and readers; each write here is read back at once, and
// at the end the cache holds exactly what a fresh list does.
func TestCacheEqualsStorageAfterRandomWrites(t *testing.T) {
	ctx := t.Context()
	store, c := newConfigMapCache(t)
	go c.Run(ctx, nil)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			writeRandomly(t, c, store, w)
		}()
	}
	stop := make(chan struct{})
	go readContinuously(ctx, c, stop)
	wg.Wait()
	close(stop)
	rev, _ := store.Revision(ctx)
	waitFor(t, func() bool { c.mu.RLock(); defer c.mu.RUnlock(); return c.rev >= rev })
	checkEqualsStorage(t, c, store)
}

// writeRandomly makes 200 writes over a few keys shared by every writer;
// even writers write here, odd ones elsewhere. Each write here is read
// back at once: the cache must have it or a later state of its key.
func writeRandomly(t *testing.T, c *Cache, store storage.Store, w int) {
	here := newInstance(t, store, c)
	if w%2 == 1 {
		here.cache = nil
	}
	for i := range 200 {
		ns, name := fmt.Sprint("ns", i%3), fmt.Sprint("k", (i*7+w)%5)
		if (i+w)%4 == 3 {
			if rev := here.del(ns, name); rev != 0 && here.cache != nil {
				checkDeleted(t, c, ns, name, rev)
			}
			continue
		}
		rev := here.put(ns, name, fmt.Sprint(w, "-", i))
		if here.cache != nil {
			checkWritten(t, c, store, ns, name, rev)
		}
	}
}

// checkWritten: right after a write at rev, the cache has ns/name at rev
// or later, or storage no longer has it at rev (a later write elsewhere).
func checkWritten(t *testing.T, c *Cache, store storage.Store, ns, name string, rev int64) {
	obj, err := c.Get(context.Background(), ns, name)
	if err == nil && revisionOf(obj) >= rev {
		return
	}
	kv, serr := store.Get(context.Background(), layout.Key(c.res, ns, name))
	if serr == nil && kv.ModRevision == rev {
		t.Errorf("Get right after writing %s/%s at %d = %v (revision %d), storage still has the write", ns, name, rev, err, revisionOf(obj))
	}
}

// checkDeleted: right after deleting the object at rev, the cache does not
// have it at rev or earlier.
func checkDeleted(t *testing.T, c *Cache, ns, name string, rev int64) {
	if obj, err := c.Get(context.Background(), ns, name); err == nil && revisionOf(obj) <= rev {
		t.Errorf("Get right after deleting %s/%s (at %d) = revision %d", ns, name, rev, revisionOf(obj))
	}
}

func readContinuously(ctx context.Context, c *Cache, stop chan struct{}) {
	sel := labels.SelectorFromSet(labels.Set{"v": "0-1"})
	for {
		select {
		case <-stop:
			return
		default:
		}
		_, _ = c.Get(ctx, "ns1", "k1")
		_, _ = c.List(ctx, "", sel)
		_, _ = c.List(ctx, "ns1", nil)
	}
}

func checkEqualsStorage(t *testing.T, c *Cache, store storage.Store) {
	t.Helper()
	_, want, err := layout.List(t.Context(), store, c.res, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := c.List(t.Context(), "", nil)
	if len(got) != len(want) {
		t.Fatalf("cache has %d objects, storage %d", len(got), len(want))
	}
	for i := range want {
		g, w := describe(got[i]), describe(want[i])
		if g != w {
			t.Errorf("cache object %d = %s, storage has %s", i, g, w)
		}
	}
}

func describe(obj runtime.Object) string {
	m, _ := meta.Accessor(obj)
	return fmt.Sprintf("%s/%s@%s %v", m.GetNamespace(), m.GetName(), m.GetResourceVersion(), obj.(*corev1.ConfigMap).Data)
}

func revisionOf(obj runtime.Object) int64 {
	if obj == nil {
		return 0
	}
	m, _ := meta.Accessor(obj)
	var rev int64
	_, _ = fmt.Sscan(m.GetResourceVersion(), &rev)
	return rev
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestCacheListOfOneNamespace: a synced cache lists the objects of the
// namespace asked for, by name, and every namespace's, by namespace then
// name, for "".
func TestCacheListOfOneNamespace(t *testing.T) {
	store, c := newConfigMapCache(t)
	in := newInstance(t, store, nil)
	for _, k := range [][2]string{{"b", "y"}, {"a", "z"}, {"b", "x"}, {"c", "w"}, {"a", "y"}} {
		in.put(k[0], k[1], k[0]+k[1])
	}
	go c.Run(t.Context(), nil)
	if err := c.WaitSynced(t.Context()); err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string]string{"a": "ay az", "b": "bx by", "none": "", "": "ay az bx by cw"} {
		objs, err := c.List(t.Context(), ns, nil)
		var got []string
		for _, o := range objs {
			got = append(got, dataOf(t, o))
		}
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("List(%q) = %v, %v; want %s", ns, got, err, want)
		}
	}
}

// TestCacheListSharedKeepsEarlierLists: ListShared hands out the cache's
// own list of a namespace without copying it, and a change gives later
// lists a new slice while one handed out before stays as it was.
func TestCacheListSharedKeepsEarlierLists(t *testing.T) {
	store, c := newConfigMapCache(t)
	in := newInstance(t, store, c)
	in.put("a", "x", "ax")
	go c.Run(t.Context(), nil)
	if err := c.WaitSynced(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	before, err := c.ListShared(ctx, "a", nil)
	if err != nil || len(before) != 1 {
		t.Fatalf("ListShared = %v, %v; want 1 object", before, err)
	}
	if allocs := testing.AllocsPerRun(10, func() { _, _ = c.ListShared(ctx, "a", nil) }); allocs != 0 {
		t.Errorf("ListShared of an unchanged namespace allocates %v times, want 0", allocs)
	}
	in.put("a", "w", "aw")
	after, err := c.ListShared(ctx, "a", nil)
	var got []string
	for _, o := range after {
		got = append(got, dataOf(t, o))
	}
	if err != nil || strings.Join(got, " ") != "aw ax" {
		t.Errorf("ListShared after a put = %v, %v; want aw ax", got, err)
	}
	if len(before) != 1 || dataOf(t, before[0]) != "ax" {
		t.Errorf("the list handed out before the put changed: %v", before)
	}
	objs, err := c.ListShared(ctx, "a", labels.SelectorFromSet(labels.Set{"v": "aw"}))
	if err != nil || len(objs) != 1 || dataOf(t, objs[0]) != "aw" {
		t.Errorf("ListShared with a selector = %v, %v; want aw", objs, err)
	}
	if len(after) != 2 || dataOf(t, after[0]) != "aw" || dataOf(t, after[1]) != "ax" {
		t.Errorf("filtering changed the shared list: %v", after)
	}
}

// BenchmarkCacheListNamespace lists one namespace's object out of 500
// namespaces (LimitRanger lists its namespace's LimitRanges twice per pod
// create).
func BenchmarkCacheListNamespace(b *testing.B) {
	store := memory.New()
	b.Cleanup(func() { _ = store.Close() })
	res, _ := registry.NewCatalogue().Lookup(configMaps)
	c := NewCache(store, res)
	in := &instance{store: store, res: res}
	for i := range 500 {
		in.put(fmt.Sprintf("ns%d", i), "x", "v")
	}
	go c.Run(b.Context(), nil)
	if err := c.WaitSynced(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if objs, _ := c.List(b.Context(), "ns250", nil); len(objs) != 1 {
			b.Fatalf("%d objects", len(objs))
		}
	}
}
