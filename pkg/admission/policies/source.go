package policies

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Snapshot is an immutable set of stored policies and bindings. The plugins
// never modify it.
type Snapshot struct {
	ValidatingPolicies []*admissionregistrationv1.ValidatingAdmissionPolicy
	ValidatingBindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	MutatingPolicies   []*admissionregistrationv1.MutatingAdmissionPolicy
	MutatingBindings   []*admissionregistrationv1.MutatingAdmissionPolicyBinding
}

// Add files obj under its kind; objects of other kinds are ignored.
func (s *Snapshot) Add(obj runtime.Object) {
	switch o := obj.(type) {
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		s.ValidatingPolicies = append(s.ValidatingPolicies, o)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		s.ValidatingBindings = append(s.ValidatingBindings, o)
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		s.MutatingPolicies = append(s.MutatingPolicies, o)
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		s.MutatingBindings = append(s.MutatingBindings, o)
	}
}

// Source gives the current snapshot. Implementations publish a new snapshot
// whenever a policy or binding changes; Current never blocks and never
// returns nil.
type Source interface {
	Current() *Snapshot
}

// StaticSource is a Source over a fixed snapshot (tests, embedding).
type StaticSource struct{ Snapshot *Snapshot }

// Current returns the fixed snapshot, or an empty one.
func (s StaticSource) Current() *Snapshot {
	if s.Snapshot == nil {
		return &Snapshot{}
	}
	return s.Snapshot
}

// ParamSource reads the objects a binding's paramRef selects. The server
// implements it over storage, so a param written through the server is seen
// by the next request.
type ParamSource interface {
	// ResolveParamKind returns the resource that serves objects of kind gvk
	// and whether it is namespaced; ok is false when no resource does.
	ResolveParamKind(gvk schema.GroupVersionKind) (gvr schema.GroupVersionResource, namespaced, ok bool)
	// GetParam returns one object, or a NotFound StatusError
	// (k8s.io/apimachinery/pkg/api/errors). namespace is empty for a
	// cluster-scoped resource.
	GetParam(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error)
	// ListParams returns the objects selected by sel, in the namespace
	// (every namespace when empty, or for a cluster-scoped resource).
	ListParams(ctx context.Context, gvr schema.GroupVersionResource, namespace string, sel labels.Selector) ([]runtime.Object, error)
}
