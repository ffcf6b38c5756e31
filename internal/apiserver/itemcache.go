package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// itemCacheBytes bounds the encoded list items kept.
const itemCacheBytes = 64 << 20

// itemCache keeps, per served resource and stored key, the object's JSON
// as a list item (and its labels), at the revision it was encoded from:
// a list finds most of its items there and neither decodes nor encodes
// them, as upstream's lists are served from its watch cache. An entry is
// good only for its own revision and resource (a custom resource's
// definition changing makes a new resource), so nothing is ever stale;
// when the cache is full it starts over.
type itemCache struct {
	mu    sync.RWMutex
	m     map[itemKey]*cachedItem
	bytes int
	// runs are, per resource and list prefix, the keys the last whole
	// list read and their cached items, in key order: the next list walks
	// them beside storage's keys instead of looking each key up in m. They
	// go when the cache starts over (gen counts the starts) or holds too
	// many entries.
	runs       map[itemKey]itemRun
	runEntries int
	gen        int
	// bodies are whole lists' answers by resource and prefix (listbody.go),
	// gone too when the cache starts over.
	bodies    map[itemKey]*listBody
	bodyBytes int
	capturing map[itemKey]bool
}

// itemRun is a list's keys, in order, with the items held for them.
type itemRun []heldItem

type heldItem struct {
	key string
	it  *cachedItem // nil: none (yet)
}

// maxRunEntries bounds the keys kept in runs, all prefixes together.
const maxRunEntries = 1 << 20

type itemKey struct {
	res *registry.Resource
	key string
}

type cachedItem struct {
	rev    int64
	json   []byte
	labels labels.Set
}

func (c *itemCache) get(res *registry.Resource, key string, rev int64) *cachedItem {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if it := c.m[itemKey{res, key}]; it != nil && it.rev == rev {
		return it
	}
	return nil
}

func (c *itemCache) put(res *registry.Resource, kv storage.KeyValue, it *cachedItem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.m == nil:
		c.m = map[itemKey]*cachedItem{}
	case c.bytes+len(it.json) > itemCacheBytes:
		c.m, c.bytes = map[itemKey]*cachedItem{}, 0
		c.runs, c.runEntries = nil, 0
		c.bodies, c.bodyBytes = nil, 0
		c.gen++
	}
	it.rev = kv.ModRevision
	k := itemKey{res, kv.Key}
	if old := c.m[k]; old != nil {
		c.bytes -= len(old.json)
	}
	c.m[k] = it
	c.bytes += len(it.json)
}

// run is the item run of res's list prefix, and the cache's generation.
func (c *itemCache) run(res *registry.Resource, prefix string) (itemRun, int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.runs[itemKey{res, prefix}], c.gen
}

// keepRun keeps the keys and items a whole list read, unless the cache
// started over since it began (gen).
func (c *itemCache) keepRun(res *registry.Resource, prefix string, gen int, seen itemRun) {
	run := seen
	if slices.ContainsFunc(seen, func(h heldItem) bool { return h.it == nil }) {
		run = slices.DeleteFunc(slices.Clone(seen), func(h heldItem) bool { return h.it == nil })
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	k := itemKey{res, prefix}
	c.runEntries -= len(c.runs[k])
	if c.runs == nil || c.runEntries+len(run) > maxRunEntries {
		c.runs, c.runEntries = map[itemKey]itemRun{}, 0
	}
	c.runs[k] = run
	c.runEntries += len(run)
}

// find is the item for key at rev in the run, from position *at on (keys
// come in order); nil when the run does not have it.
func (r itemRun) find(at *int, key string, rev int64) *heldItem {
	for *at < len(r) && r[*at].key < key {
		*at++
	}
	if *at < len(r) && r[*at].key == key && r[*at].it.rev == rev {
		return &r[*at]
	}
	return nil
}

// cacheable: res's list items may come from the cache. A custom resource
// served at another version than it is stored in is converted on every
// read, as upstream converts (a conversion webhook may answer differently
// each time).
func cacheable(res *registry.Resource) bool {
	return !res.Unstructured || res.GroupVersionResource.Version == res.StorageVersion
}

// listItemJSON is obj as a list holds it: a built-in kind's item without
// kind and apiVersion.
func listItemJSON(res *registry.Resource, obj runtime.Object) ([]byte, error) {
	if !res.Unstructured {
		obj.GetObjectKind().SetGroupVersionKind(emptyGVK)
	}
	return json.Marshal(obj)
}

// cachedItemsTaker takes a page's items for a JSON list of prefix through
// the item cache: emit gets each matching item's JSON. Only label selectors
// are answered from the cache; a field selector decodes every item. have
// tells storage which values need not be read: those the cache holds at the
// revision read (held from that moment, so that the cache starting over
// meanwhile loses nothing). The keys are looked up in the run the last
// whole list of prefix left, walked in order, then in the cache; finish,
// called once a whole list was read, leaves this list's run.
func (s *Server) cachedItemsTaker(ctx context.Context, res *registry.Resource, prefix string, lq *listQuery, emit func([]byte) error) (take pageTaker, have func(string, int64) bool, finish func()) {
	useCache := cacheable(res) && lq.filter.fields.Empty()
	var seen itemRun // the keys have was asked about, in order
	next := 0        // the first of seen the next page starts at
	finish = func() {}
	if useCache {
		last, gen := s.items.run(res, prefix)
		at := 0
		have = func(key string, rev int64) bool {
			h := heldItem{key: key}
			if found := last.find(&at, key, rev); found != nil {
				h = *found
			} else {
				h.it = s.items.get(res, key, rev)
			}
			seen = append(seen, h)
			return h.it != nil
		}
		if lq.limit == 0 && lq.continueToken == "" {
			finish = func() { s.items.keepRun(res, prefix, gen, seen) }
		}
	}
	take = func(page storage.ListResult, want int64) (int64, int, error) {
		items := make([]*cachedItem, len(page.Items))
		var missing []storage.KeyValue
		var at []int
		var heldAt []int // the position in seen of each missing item, or -1
		j := next
		for i, kv := range page.Items {
			h := -1
			if j < len(seen) && seen[j].key == kv.Key {
				h, j = j, j+1
				if it := seen[h].it; it != nil && it.rev == kv.ModRevision {
					items[i] = it
				}
			}
			if items[i] == nil && useCache {
				items[i] = s.items.get(res, kv.Key, kv.ModRevision)
			}
			if items[i] == nil {
				if kv.Value == nil { // promised but gone: cannot be
					return 0, -1, fmt.Errorf("list of %s: no value for %s", res.Resource, kv.Key)
				}
				missing, at, heldAt = append(missing, kv), append(at, i), append(heldAt, h)
			}
		}
		next = len(seen)
		if len(missing) > 0 {
			objs, err := layout.DecodeAll(ctx, res, missing)
			if err != nil {
				return 0, -1, err
			}
			for k, obj := range objs {
				it, err := s.encodeItem(res, lq, obj, useCache)
				if err != nil {
					return 0, -1, err
				}
				if it == nil { // filtered out by a field selector
					continue
				}
				items[at[k]] = it
				if useCache {
					s.items.put(res, missing[k], it)
					if heldAt[k] >= 0 {
						seen[heldAt[k]].it = it
					}
				}
			}
		}
		taken := int64(0)
		for i, it := range items {
			if it == nil || !lq.filter.labels.Empty() && !lq.filter.labels.Matches(it.labels) {
				continue
			}
			if err := emit(it.json); err != nil {
				return taken, -1, err
			}
			if taken++; want > 0 && taken >= want {
				return taken, i, nil
			}
		}
		return taken, -1, nil
	}
	return take, have, finish
}

// encodeItem encodes obj as a list item; nil when a field selector drops
// it (only when the item is not to be cached: cached items are filtered
// by labels only).
func (s *Server) encodeItem(res *registry.Resource, lq *listQuery, obj runtime.Object, forCache bool) (*cachedItem, error) {
	if !forCache && !lq.filter.matches(obj) {
		return nil, nil
	}
	lbls := labels.Set(accessor(obj).GetLabels())
	data, err := listItemJSON(res, obj)
	if err != nil {
		return nil, err
	}
	return &cachedItem{json: data, labels: lbls}, nil
}
