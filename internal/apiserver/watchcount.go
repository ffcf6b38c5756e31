package apiserver

import (
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/fields"
)

// watchKey is what a watch is counted under: its resource, namespace and
// name (either may be empty).
type watchKey struct {
	group, resource, namespace, name string
}

// watchCounts counts the open watches per resource, namespace and name, as
// upstream's watch tracker does for flow control's estimate of a write's
// work: the events it will send. A pods watch of one node (the kubelet's
// spec.nodeName selector) sees few of a write's events and is not counted.
type watchCounts struct {
	mu     sync.Mutex
	counts map[watchKey]int
}

// register counts a watch while it is open; the returned func forgets it.
func (c *watchCounts) register(r *http.Request, info *requestInfo) func() {
	if info.Group == "" && info.Resource == "pods" && selectsOneNode(info.FieldSelector) {
		return func() {}
	}
	k := watchKey{info.Group, info.Resource, info.Namespace, info.objectName()}
	c.mu.Lock()
	if c.counts == nil {
		c.counts = map[watchKey]int{}
	}
	c.counts[k]++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.counts[k]--; c.counts[k] <= 0 {
			delete(c.counts, k)
		}
	}
}

// interested is the number of watches a write of info's object may send an
// event to: those of its resource everywhere, in its namespace, and of its
// name there.
func (c *watchCounts) interested(info *requestInfo) int {
	k := watchKey{group: info.Group, resource: info.Resource}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.counts[k]
	if info.Namespace != "" {
		k.namespace = info.Namespace
		n += c.counts[k]
	}
	if info.Name != "" {
		k.name = info.Name
		n += c.counts[k]
	}
	return n
}

// selectsOneNode: the watch's field selector requires one spec.nodeName.
func selectsOneNode(sel fields.Selector) bool {
	if sel == nil {
		return false
	}
	node, ok := sel.RequiresExactMatch("spec.nodeName")
	return ok && node != ""
}
