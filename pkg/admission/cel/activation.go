package cel

import (
	"fmt"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/library"

	"github.com/admitd/admitd/pkg/admission"
)

// Input is what one evaluation sees.
type Input struct {
	// Attributes is the request: name, namespace, operation, user, dry run,
	// options, and the requested resource, kind and subresource (which
	// also preset authorizer.requestResource). Required.
	Attributes *admission.Attributes
	// Kind and Resource are what the expression matched the request as
	// (request.kind, request.resource), e.g. an equivalent version under
	// matchPolicy Equivalent. Zero values mean the request's own. Webhook
	// matchConditions pass the request's own resource with the matched
	// kind, as upstream does.
	Kind     schema.GroupVersionKind
	Resource schema.GroupVersionResource
	// Object and OldObject are the request's objects converted to Kind;
	// nil is null (object on DELETE, oldObject on CREATE and CONNECT).
	Object, OldObject runtime.Object
	// Params is the param object; nil is null.
	Params runtime.Object
	// Namespace is namespaceObject; nil is null (always so for
	// matchConditions). Policies pass TrimNamespace of the namespace.
	Namespace *corev1.Namespace
	// Authorizer binds authorizer and authorizer.requestResource to the
	// requesting user; when nil they are unbound and using them fails with
	// "no such attribute(s): authorizer".
	Authorizer admission.Authorizer
}

// Activation binds the admission variables for one evaluation. Values are
// converted lazily, when an expression first reads them, and cached
// without locks: an Activation belongs to one goroutine.
type Activation struct {
	in             Input
	kind           schema.GroupVersionKind
	resource       schema.GroupVersionResource
	resolved       uint8 // bits of the lazily bound variables
	object, oldObj any
	params         any
	request        any
	namespace      any
	authorizer     any
	resourceAuthz  any
	// variables is the lazy map of a Composition (nil without one);
	// varCost accumulates the cost of the variables it evaluated since the
	// last expression was charged.
	variables any
	varCost   int64
}

// The lazily bound variables.
const (
	boundObject uint8 = 1 << iota
	boundOldObject
	boundParams
	boundRequest
	boundNamespace
	boundAuthorizer
)

var _ interpreter.Activation = (*Activation)(nil)

// NewActivation binds the variables of in. Typed objects are exposed as
// their unstructured (JSON) form, as runtime.DefaultUnstructuredConverter
// would give it, without converting them up front.
func NewActivation(in Input) (*Activation, error) {
	a := in.Attributes
	if a == nil {
		return nil, fmt.Errorf("admission attributes are required")
	}
	act := &Activation{in: in, kind: in.Kind, resource: in.Resource}
	if act.kind.Empty() {
		act.kind = a.Kind
	}
	if act.resource.Empty() {
		act.resource = a.Resource
	}
	return act, nil
}

// objectValue is the CEL value of an object: nil for null, the map of an
// unstructured object, a lazy JSON view of a typed one.
func objectValue(obj runtime.Object) any {
	if obj == nil {
		return nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if u == nil {
			return nil
		}
		return types.DefaultTypeAdapter.NativeToValue(u.Object)
	}
	return common.SchemalessTypedToVal(obj)
}

// bind computes the value of one variable on first use.
func (a *Activation) bind(bit uint8) {
	if a.resolved&bit != 0 {
		return
	}
	a.resolved |= bit
	in := a.in
	switch bit {
	case boundObject:
		a.object = objectValue(in.Object)
	case boundOldObject:
		a.oldObj = objectValue(in.OldObject)
	case boundParams:
		if in.Params != nil {
			a.params = objectValue(in.Params)
		}
	case boundRequest:
		a.request = common.SchemalessTypedToVal(NewRequest(in.Attributes, a.resource, a.kind))
	case boundNamespace:
		a.namespace = common.SchemalessTypedToVal(in.Namespace)
	case boundAuthorizer:
		if in.Authorizer != nil {
			u, authz := userInfo(in.Attributes.UserInfo), authorizerAdapter{in.Authorizer}
			a.authorizer = library.NewAuthorizerVal(u, authz)
			a.resourceAuthz = library.NewResourceAuthorizerVal(u, authz, requestResource{in.Attributes})
		}
	}
}

// ResolveName returns the value bound to a variable name.
func (a *Activation) ResolveName(name string) (any, bool) {
	switch name {
	case ObjectVar:
		a.bind(boundObject)
		return a.object, true
	case OldObjectVar:
		a.bind(boundOldObject)
		return a.oldObj, true
	case ParamsVar:
		a.bind(boundParams)
		return a.params, true
	case RequestVar:
		a.bind(boundRequest)
		return a.request, true
	case NamespaceVar:
		a.bind(boundNamespace)
		return a.namespace, true
	case AuthorizerVar:
		a.bind(boundAuthorizer)
		return a.authorizer, a.authorizer != nil
	case RequestResourceAuthorizerVar:
		a.bind(boundAuthorizer)
		return a.resourceAuthz, a.resourceAuthz != nil
	case VariablesVar:
		return a.variables, true
	}
	return nil, false
}

// Parent is nil: admission activations do not nest.
func (a *Activation) Parent() interpreter.Activation { return nil }

// NewRequest is the request variable's value: the AdmissionRequest a
// webhook would receive for a, with kind and resource as matched, without
// uid, object and oldObject.
func NewRequest(a *admission.Attributes, resource schema.GroupVersionResource, kind schema.GroupVersionKind) *admissionv1.AdmissionRequest {
	dryRun := a.DryRun
	return &admissionv1.AdmissionRequest{
		Kind:               metav1.GroupVersionKind{Group: kind.Group, Version: kind.Version, Kind: kind.Kind},
		Resource:           metav1.GroupVersionResource{Group: resource.Group, Version: resource.Version, Resource: resource.Resource},
		SubResource:        a.Subresource,
		RequestKind:        &metav1.GroupVersionKind{Group: a.Kind.Group, Version: a.Kind.Version, Kind: a.Kind.Kind},
		RequestResource:    &metav1.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource},
		RequestSubResource: a.Subresource,
		Name:               a.Name,
		Namespace:          a.Namespace,
		Operation:          admissionv1.Operation(a.Operation),
		UserInfo:           a.UserInfo,
		DryRun:             &dryRun,
		Options:            runtime.RawExtension{Object: a.Options},
	}
}

// TrimNamespace is the namespaceObject policies see: the namespace with
// only the declared metadata, spec and status. nil stays nil.
func TrimNamespace(ns *corev1.Namespace) *corev1.Namespace {
	if ns == nil {
		return nil
	}
	return &corev1.Namespace{
		Spec:   ns.Spec,
		Status: ns.Status,
		ObjectMeta: metav1.ObjectMeta{
			Name: ns.Name, GenerateName: ns.GenerateName, Namespace: ns.Namespace, UID: ns.UID,
			ResourceVersion: ns.ResourceVersion, Generation: ns.Generation,
			CreationTimestamp: ns.CreationTimestamp, DeletionTimestamp: ns.DeletionTimestamp,
			DeletionGracePeriodSeconds: ns.DeletionGracePeriodSeconds,
			Labels:                     ns.Labels, Annotations: ns.Annotations, Finalizers: ns.Finalizers,
		},
	}
}
