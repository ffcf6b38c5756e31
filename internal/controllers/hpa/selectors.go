package hpa

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// selectorStore holds each autoscaler's latest target selector by
// namespace, to find pods two autoscalers would both scale (upstream's
// HPAOptimizedSelectorStore, on by default).
type selectorStore struct {
	mu         sync.RWMutex
	namespaces map[string]map[string]labels.Selector
}

func newSelectorStore() *selectorStore {
	return &selectorStore{namespaces: map[string]map[string]labels.Selector{}}
}

// putIfAbsent registers key with selector unless it is registered,
// reporting whether it registered it.
func (s *selectorStore) putIfAbsent(namespace, key string, selector labels.Selector) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.namespaces[namespace]
	if ns == nil {
		ns = map[string]labels.Selector{}
		s.namespaces[namespace] = ns
	}
	if _, ok := ns[key]; ok {
		return false
	}
	ns[key] = selector
	return true
}

// putIfPresent replaces a registered key's selector, reporting false
// when key is not registered (its autoscaler was deleted).
func (s *selectorStore) putIfPresent(namespace, key string, selector labels.Selector) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := s.namespaces[namespace]
	if _, ok := ns[key]; !ok {
		return false
	}
	ns[key] = selector
	return true
}

func (s *selectorStore) remove(namespace, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ns := s.namespaces[namespace]; ns != nil {
		delete(ns, key)
		if len(ns) == 0 {
			delete(s.namespaces, namespace)
		}
	}
}

// matchingPods are the keys (up to limit) whose selectors pick any of
// pods.
func (s *selectorStore) matchingPods(namespace string, pods []*corev1.Pod, limit int) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	found := map[string]bool{}
	var keys []string
	for _, p := range pods {
		set := labels.Set(p.Labels)
		for key, sel := range s.namespaces[namespace] {
			if found[key] || !sel.Matches(set) {
				continue
			}
			found[key] = true
			keys = append(keys, key)
			if len(keys) >= limit {
				return keys
			}
		}
	}
	return keys
}
