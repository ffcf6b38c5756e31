package endpointslice

import (
	"log/slog"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// nodeCache holds the Nodes as storage has them (a controllers.Follower);
// it is the NodeLister k8s.io/endpointslice's reconciler reads an
// endpoint's zone from. Nodes are cluster-scoped, which watchcache does
// not hold.
type nodeCache struct {
	res    *registry.Resource
	prefix string
	log    *slog.Logger
	// changed is called after a listing and after each change.
	changed func()

	mu     sync.RWMutex
	nodes  map[string]*corev1.Node
	synced chan struct{}
	once   sync.Once
}

var _ corelisters.NodeLister = (*nodeCache)(nil)

func newNodeCache(res *registry.Resource, log *slog.Logger, changed func()) *nodeCache {
	return &nodeCache{res: res, prefix: layout.ResourcePrefix(res), log: log, changed: changed, nodes: map[string]*corev1.Node{}, synced: make(chan struct{})}
}

func (c *nodeCache) decode(kv storage.KeyValue) (*corev1.Node, bool) {
	obj, err := layout.Decode(c.res, kv)
	if err != nil {
		c.log.Warn("decoding a stored node", "key", kv.Key, "err", err)
		return nil, false
	}
	n, ok := obj.(*corev1.Node)
	return n, ok
}

// Reset replaces the cache's nodes with a listing.
func (c *nodeCache) Reset(items []storage.KeyValue) {
	nodes := make(map[string]*corev1.Node, len(items))
	for _, kv := range items {
		if n, ok := c.decode(kv); ok {
			nodes[n.Name] = n
		}
	}
	c.mu.Lock()
	c.nodes = nodes
	c.mu.Unlock()
	c.once.Do(func() { close(c.synced) })
	c.changed()
}

// Event applies one change.
func (c *nodeCache) Event(ev storage.Event) {
	if ev.Type == storage.EventDelete {
		name := strings.TrimPrefix(ev.KV.Key, c.prefix)
		c.mu.Lock()
		delete(c.nodes, name)
		c.mu.Unlock()
		c.changed()
		return
	}
	if n, ok := c.decode(ev.KV); ok {
		c.mu.Lock()
		old := c.nodes[n.Name]
		c.nodes[n.Name] = n
		c.mu.Unlock()
		if old == nil || topologyChanged(old, n) {
			c.changed()
		}
	}
}

// topologyChanged: what the topology cache reads of a node, its readiness
// and zone, differs (the upstream controller ignores other updates, such
// as heartbeats).
func topologyChanged(old, cur *corev1.Node) bool {
	return nodeReady(old) != nodeReady(cur) || old.Labels[corev1.LabelTopologyZone] != cur.Labels[corev1.LabelTopologyZone]
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (c *nodeCache) List(sel labels.Selector) ([]*corev1.Node, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []*corev1.Node
	for _, n := range c.nodes {
		if sel.Matches(labels.Set(n.Labels)) {
			out = append(out, n)
		}
	}
	return out, nil
}

func (c *nodeCache) Get(name string) (*corev1.Node, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n, ok := c.nodes[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("node"), name)
	}
	return n, nil
}
