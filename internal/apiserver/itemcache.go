package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
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
}

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
	if c.m == nil || c.bytes+len(it.json) > itemCacheBytes {
		c.m, c.bytes = map[itemKey]*cachedItem{}, 0
	}
	it.rev = kv.ModRevision
	k := itemKey{res, kv.Key}
	if old := c.m[k]; old != nil {
		c.bytes -= len(old.json)
	}
	c.m[k] = it
	c.bytes += len(it.json)
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

// cachedItemsTaker takes a page's items for a JSON list through the item
// cache: emit gets each matching item's JSON. Only label selectors are
// answered from the cache; a field selector decodes every item. have tells
// storage which values need not be read: those the cache holds at the
// revision read (held from that moment, so that the cache starting over
// meanwhile loses nothing).
func (s *Server) cachedItemsTaker(ctx context.Context, res *registry.Resource, lq *listQuery, emit func([]byte) error) (take pageTaker, have func(string, int64) bool) {
	useCache := cacheable(res) && lq.filter.fields.Empty()
	held := map[string]*cachedItem{}
	if useCache {
		have = func(key string, rev int64) bool {
			if it := s.items.get(res, key, rev); it != nil {
				held[key] = it
				return true
			}
			return false
		}
	}
	take = func(page storage.ListResult, want int64) (int64, int, error) {
		items := make([]*cachedItem, len(page.Items))
		var missing []storage.KeyValue
		var at []int
		for i, kv := range page.Items {
			if it := held[kv.Key]; it != nil && it.rev == kv.ModRevision {
				items[i] = it
			} else if useCache {
				items[i] = s.items.get(res, kv.Key, kv.ModRevision)
			}
			if items[i] == nil {
				if kv.Value == nil { // promised but gone: cannot be
					return 0, -1, fmt.Errorf("list of %s: no value for %s", res.Resource, kv.Key)
				}
				missing, at = append(missing, kv), append(at, i)
			}
		}
		clear(held)
		if len(missing) > 0 {
			objs, err := layout.DecodeAll(ctx, res, missing)
			if err != nil {
				return 0, -1, err
			}
			for j, obj := range objs {
				it, err := s.encodeItem(res, lq, obj, useCache)
				if err != nil {
					return 0, -1, err
				}
				if it == nil { // filtered out by a field selector
					continue
				}
				items[at[j]] = it
				if useCache {
					s.items.put(res, missing[j], it)
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
	return take, have
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
