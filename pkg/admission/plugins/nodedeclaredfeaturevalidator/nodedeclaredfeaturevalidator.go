// Package nodedeclaredfeaturevalidator is the NodeDeclaredFeatureValidator
// admission plugin: it refuses an update of a bound pod (its spec, or its
// resize subresource) that needs node features (such as in-place resize of
// pod-level resources) its node does not declare in
// status.declaredFeatures; and, with the DRANodeAllocatableResources gate,
// a ResourceSlice whose devices map node allocatable resources onto nodes
// that do not declare that feature.
//
// It acts only when the NodeDeclaredFeatures feature gate is on (GA and
// locked on in 1.37). The features and their inference are those of
// k8s.io/component-helpers/nodedeclaredfeatures, as upstream. Nodes come
// from the server's watch-fed cache.
package nodedeclaredfeaturevalidator

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/features"
)

// Name is the upstream plugin name.
const Name = "NodeDeclaredFeatureValidator"

// DRANodeAllocatableResources is the gate of the ResourceSlice check.
const DRANodeAllocatableResources = "DRANodeAllocatableResources"

// KubeVersion is the version the pod's requirements are inferred for, as
// kube-apiserver 1.37.2 infers them for its own version.
var KubeVersion = version.MustParse("1.37.2")

var nodesResource = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Cache == nil {
			return nil, fmt.Errorf("missing node lister for %s", Name)
		}
		return New(Options{
			Nodes:                       pc.Cache,
			Enabled:                     pc.Gates().Enabled(features.NodeDeclaredFeatures),
			DRANodeAllocatableResources: pc.Gates().Enabled(DRANodeAllocatableResources),
		}), nil
	})
}

// Options configure the plugin.
type Options struct {
	// Nodes reads nodes (required).
	Nodes admission.ObjectCache
	// Enabled is the NodeDeclaredFeatures gate: off, the plugin does nothing.
	Enabled bool
	// DRANodeAllocatableResources is that gate: off, ResourceSlices pass.
	DRANodeAllocatableResources bool
	// Version is the version requirements are inferred for (nil:
	// KubeVersion).
	Version *version.Version
	// Framework knows the features (nil: ndf.DefaultFramework).
	Framework *ndf.Framework
}

// Plugin is the NodeDeclaredFeatureValidator plugin.
type Plugin struct {
	o Options
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin.
func New(o Options) *Plugin {
	if o.Version == nil {
		o.Version = KubeVersion
	}
	if o.Framework == nil {
		o.Framework = ndf.DefaultFramework
	}
	return &Plugin{o: o}
}

// Handles CREATE and UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Concerns reports whether the gate is on and the request is a pod update
// (of the pod or its resize subresource) or on ResourceSlices.
func (p *Plugin) Concerns(a *admission.Attributes) bool {
	if !p.o.Enabled {
		return false
	}
	switch a.Resource.GroupResource() {
	case schema.GroupResource{Resource: "pods"}:
		return a.Operation == admission.Update && (a.Subresource == "" || a.Subresource == "resize")
	case schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceslices"}:
		return true
	}
	return false
}

// Validate checks pod updates and ResourceSlices against their nodes.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	switch a.Resource.GroupResource() {
	case schema.GroupResource{Resource: "pods"}:
		return p.validatePod(ctx, a)
	case schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceslices"}:
		return p.validateResourceSlice(ctx, a)
	}
	return nil
}

func (p *Plugin) validatePod(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Update || (a.Subresource != "" && a.Subresource != "resize") {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected a pod but got a %T", a.Object))
	}
	if pod.Spec.NodeName == "" {
		return nil
	}
	old, ok := a.OldObject.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected an old pod but got a %T", a.OldObject))
	}
	if old.Generation == pod.Generation {
		return nil // the spec did not change
	}
	reqs, err := p.o.Framework.InferForPodUpdate(&ndf.PodInfo{Spec: &old.Spec, Status: &old.Status}, &ndf.PodInfo{Spec: &pod.Spec, Status: &pod.Status}, p.o.Version)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to infer pod capability requirements: %w", err))
	}
	if reqs.IsEmpty() {
		return nil
	}
	node, err := p.node(ctx, pod.Spec.NodeName)
	if apierrors.IsNotFound(err) {
		return admission.NewForbidden(a, fmt.Errorf("node %q not found", pod.Spec.NodeName))
	}
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to get node %q: %w", pod.Spec.NodeName, err))
	}
	result, err := p.o.Framework.MatchNode(reqs, node)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to match pod requirements against node %q: %w", node.Name, err))
	}
	if !result.IsMatch {
		return admission.NewForbidden(a, fmt.Errorf("pod update requires features %s which are not available on node %q", strings.Join(result.UnsatisfiedRequirements, ", "), node.Name))
	}
	return nil
}

func (p *Plugin) node(ctx context.Context, name string) (*corev1.Node, error) {
	obj, err := p.o.Nodes.GetCachedObject(ctx, nodesResource, "", name)
	if err != nil {
		return nil, err
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, fmt.Errorf("unexpected node object %T", obj)
	}
	return node, nil
}

func (p *Plugin) nodes(ctx context.Context) ([]*corev1.Node, error) {
	objs, err := p.o.Nodes.ListCachedObjects(ctx, nodesResource, "", nil)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Node, 0, len(objs))
	for _, o := range objs {
		if n, ok := o.(*corev1.Node); ok {
			out = append(out, n)
		}
	}
	return out, nil
}
