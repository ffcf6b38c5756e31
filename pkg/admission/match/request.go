package match

import (
	"context"
	"errors"
	"unique"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Equivalents tells which resources address the same stored data as a
// resource, and the kind each resource[/subresource] expects. The server's
// resource catalogue implements it; its method set is upstream's
// runtime.EquivalentResourceMapper, so k8s.io/apimachinery's
// runtime.NewEquivalentResourceRegistry satisfies it too.
type Equivalents interface {
	// EquivalentResourcesFor returns the resources equivalent to gvr that
	// also have subresource, in registration order. The list may include
	// gvr itself. The caller does not modify it.
	EquivalentResourcesFor(gvr schema.GroupVersionResource, subresource string) []schema.GroupVersionResource
	// KindFor returns the kind gvr[/subresource] expects, or the zero value
	// when it is unknown.
	KindFor(gvr schema.GroupVersionResource, subresource string) schema.GroupVersionKind
}

// Env is what matching needs from the server. It is built once per plugin.
type Env struct {
	// Namespaces reads namespaces for namespaceSelectors; never consulted
	// for an empty selector or a cluster-scoped request.
	Namespaces admission.NamespaceLookup
	// Equivalents serves matchPolicy Equivalent; nil means no resource has
	// an equivalent.
	Equivalents Equivalents
}

// Request is the matching state of one admission request in one plugin: the
// attributes, the equivalent resources and the namespace labels, each
// computed at most once, and the verdicts of the first distinct
// namespaceSelectors. The namespace itself is read through the request's
// admission.Record (when set), so it is read once per request across
// plugins.
//
// A Request is not safe for concurrent use. Create it with NewRequest, keep
// it in a variable and pass its address; do not copy it after use. Object
// and OldObject are read from the attributes at each Match, so a mutating
// dispatcher sees its latest object.
type Request struct {
	ctx   context.Context
	env   Env
	attrs *admission.Attributes

	eqDone bool
	eq     []schema.GroupVersionResource

	nsDone   bool
	nsLabels map[string]string
	nsErr    *apierrors.StatusError

	nmemo int
	memo  [8]selectorMemo // namespaceSelector verdicts, by selector
}

type selectorMemo struct {
	key   unique.Handle[string]
	match bool
}

// NewRequest starts matching a. ctx is used for namespace lookups.
func NewRequest(ctx context.Context, env Env, a *admission.Attributes) Request {
	return Request{ctx: ctx, env: env, attrs: a}
}

// Attributes returns the request's attributes.
func (r *Request) Attributes() *admission.Attributes { return r.attrs }

// equivalents returns the resources equivalent to the request's.
func (r *Request) equivalents() []schema.GroupVersionResource {
	if !r.eqDone {
		r.eqDone = true
		if r.env.Equivalents != nil {
			r.eq = r.env.Equivalents.EquivalentResourcesFor(r.attrs.Resource, r.attrs.Subresource)
		}
	}
	return r.eq
}

func (r *Request) kindFor(gvr schema.GroupVersionResource) schema.GroupVersionKind {
	if r.env.Equivalents == nil {
		return schema.GroupVersionKind{}
	}
	return r.env.Equivalents.KindFor(gvr, r.attrs.Subresource)
}

// namespaceLabels returns the labels of the request's namespace, reading it
// once per request.
func (r *Request) namespaceLabels() (map[string]string, *apierrors.StatusError) {
	if !r.nsDone {
		r.nsDone = true
		r.nsLabels, r.nsErr = r.readNamespace()
	}
	return r.nsLabels, r.nsErr
}

// errEmptyName is what upstream's client returns when its namespace cache
// misses an empty name (a namespace-less request on a resource called
// "namespaces" that is not a namespace write).
var errEmptyName = errors.New("resource name may not be empty")

var errNoLookup = errors.New("the namespace matcher requires a namespace lookup")

// readNamespace reads the namespace; NotFound is passed on as the 404 it is,
// any other failure becomes a 500, as upstream.
func (r *Request) readNamespace() (map[string]string, *apierrors.StatusError) {
	name := r.attrs.Namespace
	if name == "" {
		return nil, apierrors.NewInternalError(errEmptyName)
	}
	if r.env.Namespaces == nil {
		return nil, apierrors.NewInternalError(errNoLookup)
	}
	var ns *corev1.Namespace
	var err error
	if rec := r.attrs.Record; rec != nil {
		ns, err = rec.Namespace(r.ctx, name, r.env.Namespaces)
	} else {
		ns, err = r.env.Namespaces.GetNamespace(r.ctx, name)
	}
	if err == nil {
		if ns == nil {
			return nil, nil
		}
		return ns.Labels, nil
	}
	if apierrors.IsNotFound(err) {
		if st, ok := err.(apierrors.APIStatus); ok {
			return nil, &apierrors.StatusError{ErrStatus: st.Status()}
		}
	}
	return nil, apierrors.NewInternalError(err)
}
