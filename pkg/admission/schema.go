package admission

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Schema is what plugins need to know about the served kinds: how to make,
// convert and default objects, and which resources are versions of the same
// thing. The server implements it from its catalogue.
type Schema interface {
	// New returns an empty object of kind gvk (a k8s.io/api type, or
	// *unstructured.Unstructured for custom resources).
	New(gvk schema.GroupVersionKind) (runtime.Object, error)
	// ConvertTo returns obj converted to kind gvk; obj is not modified.
	ConvertTo(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error)
	// Default applies the defaults of obj's kind.
	Default(obj runtime.Object)
	// EquivalentResourcesFor lists every served resource that addresses
	// the same objects as gvr and has subresource, gvr included.
	EquivalentResourcesFor(gvr schema.GroupVersionResource, subresource string) []schema.GroupVersionResource
	// KindFor is the kind of a resource or of one of its subresources, or
	// the zero value when unknown.
	KindFor(gvr schema.GroupVersionResource, subresource string) schema.GroupVersionKind
}
