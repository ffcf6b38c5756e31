package registry

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Converter converts the custom resources of one definition between its
// versions, as the definition's spec.conversion says.
type Converter interface {
	// Convert replaces every object of objs (all of the definition's
	// kind) that is not in version gv by its conversion; objects already
	// in gv are left as they are. On error objs is unchanged.
	Convert(ctx context.Context, objs []*unstructured.Unstructured, gv schema.GroupVersion) error
}

// ConverterFactory builds the converter of a definition.
type ConverterFactory func(crd *apiextensionsv1.CustomResourceDefinition) (Converter, error)

// RelabelConverter is conversion strategy None: only apiVersion changes.
type RelabelConverter struct{}

// Convert sets apiVersion to gv.
func (RelabelConverter) Convert(_ context.Context, objs []*unstructured.Unstructured, gv schema.GroupVersion) error {
	for _, o := range objs {
		o.SetAPIVersion(gv.String())
	}
	return nil
}

// SetConverterFactory makes CustomResourcesOf give every definition's
// resources the converter f builds (without one: RelabelConverter).
func (c *Catalogue) SetConverterFactory(f ConverterFactory) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.converters = f
}

// CustomResourcesOf is CustomResources with the definition's converter,
// shared by its versions. A converter that cannot be built (a client
// configuration that cannot be used) makes every conversion fail with
// its error.
func (c *Catalogue) CustomResourcesOf(crd *apiextensionsv1.CustomResourceDefinition) []*Resource {
	c.mu.Lock()
	f := c.converters
	c.mu.Unlock()
	var conv Converter = RelabelConverter{}
	if f != nil {
		built, err := f(crd)
		if err != nil {
			built = failingConverter{err}
		}
		conv = built
	}
	out := CustomResources(crd)
	for _, r := range out {
		r.Converter = conv
	}
	return out
}

type failingConverter struct{ err error }

func (f failingConverter) Convert(context.Context, []*unstructured.Unstructured, schema.GroupVersion) error {
	return f.err
}

// ConvertCustom converts objs (custom resources of r's definition) to r's
// version; objects without a converter are relabelled.
func (r *Resource) ConvertCustom(ctx context.Context, objs []*unstructured.Unstructured) error {
	return r.ConvertCustomTo(ctx, objs, r.Version)
}

// ConvertCustomTo converts objs to version of r's group.
func (r *Resource) ConvertCustomTo(ctx context.Context, objs []*unstructured.Unstructured, version string) error {
	conv := r.Converter
	if conv == nil {
		conv = RelabelConverter{}
	}
	return conv.Convert(ctx, objs, schema.GroupVersion{Group: r.Group, Version: version})
}
