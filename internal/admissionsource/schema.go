package admissionsource

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/admission"
)

// Schema answers admission plugins' questions about served kinds from the
// catalogue.
type Schema struct {
	cat *registry.Catalogue
}

var _ admission.Schema = (*Schema)(nil)

// NewSchema returns the admission view of a catalogue.
func NewSchema(cat *registry.Catalogue) *Schema { return &Schema{cat: cat} }

// New returns an empty object of kind gvk.
func (s *Schema) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	res, ok := s.cat.LookupKind(gvk)
	if !ok {
		if obj, err := registry.Scheme().New(gvk); err == nil {
			return obj, nil
		}
		return nil, fmt.Errorf("no kind %q is registered for version %q in scheme \"pkg/runtime/scheme.go:111\"", gvk.Kind, gvk.GroupVersion().String())
	}
	return layout.NewObject(res)
}

// ConvertTo converts obj to gvk: custom resources through their
// definition's converter (relabelling for strategy None, the conversion
// webhook for Webhook), built-in kinds served in several versions (HPAs)
// or groups (Events) through the scheme's conversions.
func (s *Schema) ConvertTo(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	if obj.GetObjectKind().GroupVersionKind() == gvk {
		return obj, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		objs := []*unstructured.Unstructured{u.DeepCopy()}
		if res, ok := s.cat.LookupKind(gvk); ok && res.Unstructured && u.GroupVersionKind().GroupKind() == gvk.GroupKind() {
			if err := res.ConvertCustom(context.Background(), objs); err != nil {
				return nil, err
			}
		}
		objs[0].SetGroupVersionKind(gvk)
		return objs[0], nil
	}
	if from := obj.GetObjectKind().GroupVersionKind(); registry.SameStoredKind(from.GroupKind(), gvk.GroupKind()) {
		if out, err := registry.ConvertTo(obj.DeepCopyObject(), gvk); err == nil {
			return out, nil
		}
	}
	return nil, fmt.Errorf("converting (%s) to (%s): unknown conversion", obj.GetObjectKind().GroupVersionKind(), gvk)
}

// Default applies the defaults of obj's kind.
func (s *Schema) Default(obj runtime.Object) {
	res, ok := s.cat.LookupKind(obj.GetObjectKind().GroupVersionKind())
	if ok && res.Strategy.Default != nil {
		res.Strategy.Default(obj)
	}
}

// EquivalentResourcesFor lists the served versions of gvr that have
// subresource.
func (s *Schema) EquivalentResourcesFor(gvr schema.GroupVersionResource, subresource string) []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	for _, e := range s.cat.Equivalents(gvr) {
		res, _ := s.cat.Lookup(e)
		if subresource != "" {
			if _, ok := res.Subresource(subresource); !ok {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// KindFor returns the kind of gvr or of its subresource.
func (s *Schema) KindFor(gvr schema.GroupVersionResource, subresource string) schema.GroupVersionKind {
	res, ok := s.cat.Lookup(gvr)
	if !ok {
		return schema.GroupVersionKind{}
	}
	if subresource == "" {
		return res.GroupVersionKind()
	}
	sub, ok := res.Subresource(subresource)
	if !ok {
		return schema.GroupVersionKind{}
	}
	return sub.Kind
}
