package server

import (
	"context"
	"log/slog"
	"slices"
	"strconv"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/auth/node"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// graphResources are what the Node authorizer's graph is built from, with
// the graph's event methods, as upstream's graph populator.
func graphResources(g *node.Graph) map[schema.GroupVersionResource]graphHandlers {
	return map[schema.GroupVersionResource]graphHandlers{
		corev1.SchemeGroupVersion.WithResource("pods"):                 handlers(g.AddPod, g.UpdatePod, g.DeletePod),
		corev1.SchemeGroupVersion.WithResource("persistentvolumes"):    handlers(g.AddPV, g.UpdatePV, g.DeletePV),
		storagev1.SchemeGroupVersion.WithResource("volumeattachments"): handlers(g.AddVolumeAttachment, g.UpdateVolumeAttachment, g.DeleteVolumeAttachment),
		resourcev1.SchemeGroupVersion.WithResource("resourceslices"):   handlers(g.AddResourceSlice, nil, g.DeleteResourceSlice),
		certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests"): handlers(
			g.AddPodCertificateRequest, nil, g.DeletePodCertificateRequest),
	}
}

// nodeGraph is the Node authorizer with the feeds that keep its graph: one
// per graph resource the catalogue serves as a built-in type (admitd does
// not serve volume attachments, resource slices nor pod certificate
// requests yet: nothing can name a node there).
type nodeGraph struct {
	authorizer *node.Authorizer
	feeds      map[schema.GroupResource]*graphFeed
}

// newNodeGraph returns the Node authorizer and its feeds when modes include
// Node, and nil otherwise. Its metrics are registered with reg.
func newNodeGraph(modes []string, store storage.Store, cat *registry.Catalogue, reg prometheus.Registerer, log *slog.Logger) (*nodeGraph, error) {
	if !slices.Contains(modes, auth.ModeNode) {
		return nil, nil
	}
	g := node.NewGraph(node.NewMetrics(reg))
	n := &nodeGraph{authorizer: node.NewWithBootstrapRules(g), feeds: map[schema.GroupResource]*graphFeed{}}
	log = log.With("component", "node-graph")
	for gvr, h := range graphResources(g) {
		if res, ok := cat.Lookup(gvr); ok && !res.Unstructured {
			n.feeds[gvr.GroupResource()] = newGraphFeed(store, res, h, log)
		}
	}
	return n, nil
}

// list fills the graph from storage.
func (n *nodeGraph) list(ctx context.Context) error {
	for _, f := range n.feeds {
		if err := f.list(ctx); err != nil {
			return err
		}
	}
	return nil
}

// run follows storage until ctx ends.
func (n *nodeGraph) run(ctx context.Context) {
	for _, f := range n.feeds {
		go f.run(ctx)
	}
}

// observer applies the writes of this server to the graph before they
// return, so that a kubelet may read what its pod references as soon as the
// pod's create has returned.
func (n *nodeGraph) observer() apiserver.WriteObserver {
	return apiserver.Observer{
		HandlesFunc: func(gvr schema.GroupVersionResource) bool {
			_, ok := n.feeds[gvr.GroupResource()]
			return ok
		},
		WrittenFunc: func(_ context.Context, ev apiserver.WriteEvent) {
			f := n.feeds[ev.Resource.GroupResource()]
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				return
			}
			rev, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
			if err != nil {
				return // the watch brings it
			}
			key := layout.Key(f.res, m.GetNamespace(), m.GetName())
			f.written(key, ev.Object.DeepCopyObject(), rev, ev.Deleted)
		},
	}
}

// nodeAuthorizer is the Node authorizer, nil when n is.
func (n *nodeGraph) nodeAuthorizer() *node.Authorizer {
	if n == nil {
		return nil
	}
	return n.authorizer
}
