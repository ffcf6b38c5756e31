package apiserver

import (
	"maps"
	"sync"
	"sync/atomic"
)

// seriesMap maps keys to the series made for them on first use. Lookups
// take no lock: the map is replaced, never changed, and mu orders the
// writers. It suits what is made once and read on every request.
type seriesMap[K comparable, V any] struct {
	m  atomic.Pointer[map[K]V]
	mu sync.Mutex
}

// get returns k's value, made by newValue the first time.
func (s *seriesMap[K, V]) get(k K, newValue func(K) V) V {
	if m := s.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	return s.add(k, newValue)
}

// add makes k's value and publishes a copy of the map with it.
func (s *seriesMap[K, V]) add(k K, newValue func(K) V) V {
	s.mu.Lock()
	defer s.mu.Unlock()
	var old map[K]V
	if m := s.m.Load(); m != nil {
		old = *m
	}
	if v, ok := old[k]; ok {
		return v
	}
	v := newValue(k)
	next := make(map[K]V, len(old)+1)
	maps.Copy(next, old)
	next[k] = v
	s.m.Store(&next)
	return v
}
