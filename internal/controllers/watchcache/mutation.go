package watchcache

import (
	"reflect"
	"sync"

	"github.com/admitd/admitd/pkg/storage"
)

// DetectMutations turns on a debug check of the rule that cached objects
// are shared read-only (client-go's cache mutation detector): the cache
// keeps the stored bytes of each object, and when an object leaves the
// cache (replaced by a newer revision, deleted, relisted) or at Check, it
// decodes them again and calls report with the object's key if the
// cached object no longer equals what storage holds: someone changed a
// shared object instead of a copy. It doubles the decoding; it is for
// tests. Call it before the cache is fed.
func (c *Cache[T]) DetectMutations(report func(key string)) {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	c.mutation = &mutationCheck[T]{decode: c.decode, report: report, values: map[string]storage.KeyValue{}}
}

// CheckMutations compares every cached object with its stored bytes, as
// DetectMutations does when an object leaves the cache; without
// DetectMutations it does nothing.
func (c *Cache[T]) CheckMutations() {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	if c.mutation == nil {
		return
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for ns, names := range c.items {
		for name, obj := range names {
			c.mutation.check(c.storageKey(ns, name), obj)
		}
	}
}

// mutationCheck is DetectMutations' record: the stored value of each
// cached object.
type mutationCheck[T any] struct {
	decode func(storage.KeyValue) (T, error)
	report func(key string)
	mu     sync.Mutex
	values map[string]storage.KeyValue
}

// stored records the value obj was decoded from.
func (m *mutationCheck[T]) stored(kv storage.KeyValue, obj T) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.values[kv.Key] = kv
	m.mu.Unlock()
}

// replaced checks obj, which leaves the cache, and forgets its value.
func (m *mutationCheck[T]) replaced(key string, obj T) {
	if m == nil {
		return
	}
	m.check(key, obj)
	m.mu.Lock()
	delete(m.values, key)
	m.mu.Unlock()
}

func (m *mutationCheck[T]) check(key string, obj T) {
	m.mu.Lock()
	kv, ok := m.values[key]
	m.mu.Unlock()
	if !ok {
		return
	}
	pristine, err := m.decode(kv)
	if err == nil && !reflect.DeepEqual(pristine, obj) {
		m.report(key)
	}
}
