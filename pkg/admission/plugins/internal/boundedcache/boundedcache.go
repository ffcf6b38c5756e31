// Package boundedcache is a concurrent map of values plugins work out once
// per stored object (a compiled LimitRange, a namespace's parsed policy),
// bounded by count: at its limit it forgets everything and starts over, so
// values of replaced objects are not kept for long.
package boundedcache

import (
	"sync"
	"sync/atomic"
)

// Cache maps K to V, holding at most Max entries. The zero Cache is not
// usable: set Max.
type Cache[K comparable, V any] struct {
	Max int32
	m   sync.Map // K → V
	n   atomic.Int32
}

// Load returns the value stored for k.
func (c *Cache[K, V]) Load(k K) (V, bool) {
	v, ok := c.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// Store stores v for k, first forgetting everything when k is new and the
// cache is full.
func (c *Cache[K, V]) Store(k K, v V) {
	if _, held := c.m.Load(k); !held && c.n.Load() >= c.Max {
		c.m.Clear()
		c.n.Store(0)
	}
	if _, loaded := c.m.Swap(k, v); !loaded {
		c.n.Add(1)
	}
}

// Len is the number of entries held.
func (c *Cache[K, V]) Len() int { return int(c.n.Load()) }
