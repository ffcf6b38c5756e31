package endpointslice

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/admitd/admitd/internal/controllers/watchcache"
)

// nodeCache is the NodeLister k8s.io/endpointslice's reconciler reads an
// endpoint's zone from, over the shared cache of Nodes (cluster-scoped,
// kept under the namespace "").
type nodeCache struct {
	cache *watchcache.Cache[*corev1.Node]
}

var _ corelisters.NodeLister = nodeCache{}

// nodeHandlers call changed when a node comes or goes, or its topology
// changes.
func nodeHandlers(changed func()) watchcache.Handlers[*corev1.Node] {
	return watchcache.Handlers[*corev1.Node]{
		Add: func(*corev1.Node) { changed() },
		Update: func(old, cur *corev1.Node) {
			if topologyChanged(old, cur) {
				changed()
			}
		},
		Remove: func(*corev1.Node) { changed() },
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

func (c nodeCache) List(sel labels.Selector) ([]*corev1.Node, error) {
	return c.cache.ListAll(func(n *corev1.Node) bool { return sel.Matches(labels.Set(n.Labels)) }), nil
}

func (c nodeCache) Get(name string) (*corev1.Node, error) {
	n, ok := c.cache.Get("", name)
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("node"), name)
	}
	return n, nil
}
