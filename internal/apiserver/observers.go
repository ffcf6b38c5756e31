package apiserver

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WriteEvent is one successful write that was not a dry run.
type WriteEvent struct {
	// Resource is the resource written, in the version the request
	// addressed.
	Resource schema.GroupVersionResource
	// Deleted is true when the object is gone from storage.
	Deleted bool
	// Object is what was stored, or for a delete the object deleted. It is
	// shared with the response: observers must not modify it.
	Object runtime.Object
}

// WriteObserver sees the writes of the resources it handles after they are
// stored and before the request that made them returns (config caches,
// the catalogue of custom resources, the CA injection controller). A write
// is observed by the server that made it only: what has to reach every
// instance sharing the storage must also watch it.
type WriteObserver interface {
	Handles(gvr schema.GroupVersionResource) bool
	Written(ctx context.Context, ev WriteEvent)
}

// Observer adapts two functions to a WriteObserver.
type Observer struct {
	HandlesFunc func(gvr schema.GroupVersionResource) bool
	WrittenFunc func(ctx context.Context, ev WriteEvent)
}

// Handles calls HandlesFunc.
func (o Observer) Handles(gvr schema.GroupVersionResource) bool { return o.HandlesFunc(gvr) }

// Written calls WrittenFunc.
func (o Observer) Written(ctx context.Context, ev WriteEvent) { o.WrittenFunc(ctx, ev) }

// ObserveResources returns an observer of the writes of resources (any
// version).
func ObserveResources(written func(ctx context.Context, ev WriteEvent), resources ...schema.GroupResource) WriteObserver {
	return Observer{
		HandlesFunc: func(gvr schema.GroupVersionResource) bool {
			for _, r := range resources {
				if r == gvr.GroupResource() {
					return true
				}
			}
			return false
		},
		WrittenFunc: written,
	}
}

// afterWrite tells the observers of ev's resource about it, in the order
// they were configured.
func (s *Server) afterWrite(ctx context.Context, ev WriteEvent) {
	s.releaseServiceIPs(ctx, ev)
	for _, o := range s.cfg.Observers {
		if o.Handles(ev.Resource) {
			o.Written(ctx, ev)
		}
	}
}
