// Package admissiontest helps test admission plugins, admitd's or a library
// user's own: a builder of Attributes as the server fills them, and a
// table runner that sends each case through a Chain (mutating phase with
// reinvocation, then validating phase) and compares the decision, the
// object and the record with the case's expectations.
//
// It is for tests only; it starts no server and reads no cluster state.
package admissiontest

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/admitd/admitd/pkg/admission"
)

// Builder builds one request's Attributes. Start it with Create, Update,
// Delete or Connect, adjust it, and call Attributes.
type Builder struct {
	a   admission.Attributes
	gvr *schema.GroupVersionResource
}

// Create is the CREATE of obj.
func Create(obj runtime.Object) *Builder {
	return newBuilder(admission.Create, obj, nil, obj, &metav1.CreateOptions{}, "CreateOptions")
}

// Update is the UPDATE of old into obj.
func Update(obj, old runtime.Object) *Builder {
	return newBuilder(admission.Update, obj, old, obj, &metav1.UpdateOptions{}, "UpdateOptions")
}

// Delete is the DELETE of old.
func Delete(old runtime.Object) *Builder {
	return newBuilder(admission.Delete, nil, old, old, &metav1.DeleteOptions{}, "DeleteOptions")
}

// Connect is a CONNECT to subresource (such as "exec") of obj, which
// names the object connected to; obj is not part of the request.
func Connect(obj runtime.Object, subresource string) *Builder {
	b := newBuilder(admission.Connect, nil, nil, obj, nil, "")
	b.a.Subresource = subresource
	return b
}

// newBuilder starts attributes whose name, namespace and kind are those of
// named, with options of kind optsKind (none when opts is nil).
func newBuilder(op admission.Operation, obj, old, named runtime.Object, opts runtime.Object, optsKind string) *Builder {
	b := &Builder{a: admission.Attributes{Operation: op, Object: obj, OldObject: old, Kind: gvkOf(named)}}
	if opts != nil {
		opts.GetObjectKind().SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind(optsKind))
		b.a.Options = opts
	}
	if m, err := meta.Accessor(named); err == nil {
		b.a.Name, b.a.Namespace = m.GetName(), m.GetNamespace()
	}
	return b
}

// Resource sets the resource and subresource, when the one guessed from
// the object's kind (its lower-case plural) is not the right one.
func (b *Builder) Resource(gvr schema.GroupVersionResource, subresource string) *Builder {
	b.gvr, b.a.Subresource = &gvr, subresource
	return b
}

// Kind sets the kind, for an object whose kind cannot be found (a type
// outside client-go's scheme without apiVersion and kind set).
func (b *Builder) Kind(gvk schema.GroupVersionKind) *Builder {
	b.a.Kind = gvk
	return b
}

// User sets the requesting user.
func (b *Builder) User(name string, groups ...string) *Builder {
	b.a.UserInfo = authenticationv1.UserInfo{Username: name, Groups: groups}
	return b
}

// DryRun marks the request as a dry run.
func (b *Builder) DryRun() *Builder {
	b.a.DryRun = true
	return b
}

// Attributes returns the attributes, with a new Record. Each call returns
// a fresh copy that shares the objects.
func (b *Builder) Attributes() *admission.Attributes {
	a := b.a
	a.Resource, _ = meta.UnsafeGuessKindToResource(a.Kind)
	if b.gvr != nil {
		a.Resource = *b.gvr
	}
	a.Record = admission.NewRecord()
	return &a
}

// gvkOf is obj's kind: its apiVersion and kind, else its kind in
// client-go's scheme, else the zero value.
func gvkOf(obj runtime.Object) schema.GroupVersionKind {
	if obj == nil {
		return schema.GroupVersionKind{}
	}
	if gvk := obj.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
		return gvk
	}
	if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
		return gvks[0]
	}
	return schema.GroupVersionKind{}
}
