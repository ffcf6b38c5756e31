package openapi

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/internal/registry"
)

// ResolveSchema returns the OpenAPI v3 schema of a built-in kind with
// every reference inlined, as upstream's DefinitionsSchemaResolver does for
// ValidatingAdmissionPolicy type checking: a reference to a model already
// being inlined on the path (JSONSchemaProps refers to itself) becomes an
// empty object, so the tree is finite. It returns nil for kinds the scheme
// does not register as a Go type (custom resources). Results are cached
// per kind and shared: callers must not modify them. It is safe for
// concurrent use.
func (s *Service) ResolveSchema(gvk schema.GroupVersionKind) *spec.Schema {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.resolved[gvk]; ok {
		return r
	}
	r := s.resolve(gvk)
	if s.resolved == nil {
		s.resolved = map[schema.GroupVersionKind]*spec.Schema{}
	}
	s.resolved[gvk] = r
	return r
}

// resolve builds the resolved schema of gvk, nil when it has none.
// Callers hold s.mu.
func (s *Service) resolve(gvk schema.GroupVersionKind) *spec.Schema {
	name := s.builtinModel(gvk)
	if name == "" {
		return nil
	}
	out, err := resolver.PopulateRefs(s.b.schemaOf, v3RefPrefix+name)
	if err != nil {
		return nil
	}
	return out
}

// builtinModel defines the model of a built-in kind and returns its name;
// "" when the scheme has no Go type for gvk. Callers hold s.mu.
func (s *Service) builtinModel(gvk schema.GroupVersionKind) string {
	obj, err := registry.Scheme().New(gvk)
	if err != nil {
		return ""
	}
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return ""
	}
	if s.b == nil {
		s.b = newBuilder(s.opts.Version)
	}
	return s.b.gen.define(reflect.TypeOf(obj))
}

// schemaOf looks up the generated definition a v3 reference names.
func (b *builder) schemaOf(ref string) (*spec.Schema, bool) {
	name, ok := strings.CutPrefix(ref, v3RefPrefix)
	if !ok {
		return nil, false
	}
	d, ok := b.gen.defs[name]
	if !ok {
		return nil, false
	}
	s := d.schema
	return &s, true
}
