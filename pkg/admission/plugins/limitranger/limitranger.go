// Package limitranger is the LimitRanger admission plugin: the LimitRanges
// of a namespace give its pods' containers default requests and limits
// (mutating phase, recorded in the kubernetes.io/limit-ranger annotation)
// and bound the requests, limits and limit/request ratios of containers,
// pods and persistent volume claims (validating phase).
//
// LimitRanges are read from the server's watch-fed cache. Upstream reads an
// informer and, when it lists none, lists the namespace live through a
// 30-second cache to cover informer lag; the cache here already shows every
// write this server acknowledged, so it needs no such fallback.
//
// It does not default LimitRanges themselves (the server's defaulting of
// LimitRange does, as upstream) and charges nothing: ResourceQuota does.
package limitranger

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/boundedcache"
	"github.com/admitd/admitd/pkg/features"
)

// Name is the upstream plugin name.
const Name = "LimitRanger"

// Annotation is the pod annotation that lists the defaults LimitRanger set.
const Annotation = "kubernetes.io/limit-ranger"

var limitRangesResource = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Cache == nil {
			return nil, fmt.Errorf("missing limitRange lister")
		}
		return New(pc.Cache, Options{PodLevelResources: pc.Gates().Enabled(features.PodLevelResources)}), nil
	})
}

// Options are the feature gates the plugin reads.
type Options struct {
	// PodLevelResources makes Pod limits read the pod's spec.resources
	// (gate PodLevelResources; on by default in 1.37).
	PodLevelResources bool
}

// Plugin is the LimitRanger plugin.
type Plugin struct {
	limitRanges admission.ResourceCache
	opts        Options
	ranges      boundedcache.Cache[*corev1.LimitRange, *compiledRange]
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plugin over a cache of LimitRanges.
func New(cache admission.ObjectCache, opts Options) *Plugin {
	return &Plugin{limitRanges: admission.CacheOf(cache, limitRangesResource), opts: opts,
		ranges: boundedcache.Cache[*corev1.LimitRange, *compiledRange]{Max: maxCompiledRanges}}
}

// Handles CREATE and UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit fills the defaults of every LimitRange of the namespace into the
// pod's containers and init containers.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	return p.run(ctx, a, func(lr *compiledRange) error {
		if pod, ok := a.Object.(*corev1.Pod); ok && a.Resource.Resource == "pods" {
			setDefaults(lr, pod)
		}
		return nil
	})
}

// Validate checks the pod or claim against every LimitRange of the
// namespace.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	return p.run(ctx, a, func(lr *compiledRange) error {
		switch obj := a.Object.(type) {
		case *corev1.Pod:
			if a.Resource.Resource == "pods" {
				return validatePod(lr, obj, p.opts)
			}
		case *corev1.PersistentVolumeClaim:
			if a.Resource.Resource == "persistentvolumeclaims" {
				return validateClaim(lr, obj)
			}
		}
		return nil
	})
}

// run applies f to each LimitRange of the namespace in turn, for the
// requests LimitRanger looks at; the first error is the 403.
func (p *Plugin) run(ctx context.Context, a *admission.Attributes, f func(lr *compiledRange) error) error {
	if !supports(a) {
		return nil
	}
	if a.OldObject != nil {
		m, err := meta.Accessor(a.OldObject)
		if err != nil {
			return admission.NewForbidden(a, err)
		}
		if m.GetDeletionTimestamp() != nil {
			return nil
		}
	}
	items, err := p.limitRanges.List(ctx, a.Namespace, nil)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("unable to %s %v at this time because there was an error enforcing limit ranges", a.Operation, a.Resource))
	}
	for _, item := range items {
		lr, ok := item.(*corev1.LimitRange)
		if !ok {
			continue
		}
		if err := f(p.compiled(lr)); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

// supports reports whether LimitRanger looks at the request: pod creates,
// pod resizes, and claim creates and updates. Other pod updates cannot
// change resources, and other subresources are not looked at.
func supports(a *admission.Attributes) bool {
	pod := a.Kind.Group == "" && a.Kind.Kind == "Pod"
	if a.Subresource == "resize" && pod && a.Operation == admission.Update {
		return true
	}
	if a.Subresource != "" {
		return false
	}
	if pod {
		return a.Operation != admission.Update
	}
	return a.Kind.Group == "" && a.Kind.Kind == "PersistentVolumeClaim"
}
