package openapi

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

func TestResolveSchemaBuiltin(t *testing.T) {
	s := New(registry.NewCatalogue(), Options{})
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	d := s.ResolveSchema(gvk)
	if d == nil {
		t.Fatal("ResolveSchema(Deployment) = nil")
	}
	if d.Ref.GetURL() != nil {
		t.Errorf("Deployment schema is a reference: %s", d.Ref.String())
	}
	replicas := d.Properties["spec"].Properties["replicas"]
	if !replicas.Type.Contains("integer") {
		t.Errorf("spec.replicas = %+v, want an inlined integer", replicas.SchemaProps)
	}
	if name := d.Properties["metadata"].Properties["name"]; !name.Type.Contains("string") {
		t.Errorf("metadata.name = %+v, want an inlined string", name.SchemaProps)
	}
	containers := d.Properties["spec"].Properties["template"].Properties["spec"].Properties["containers"]
	if containers.Items == nil || containers.Items.Schema == nil || !containers.Items.Schema.Properties["image"].Type.Contains("string") {
		t.Errorf("spec.template.spec.containers = %+v, want inlined items", containers.SchemaProps)
	}
	if again := s.ResolveSchema(gvk); again != d {
		t.Error("ResolveSchema is not cached per kind")
	}
}

// TestResolveSchemaRecursive checks a self-referring model resolves to a
// finite tree: the recursive reference becomes an empty object.
func TestResolveSchemaRecursive(t *testing.T) {
	s := New(registry.NewCatalogue(), Options{})
	crd := s.ResolveSchema(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	if crd == nil {
		t.Fatal("ResolveSchema(CustomResourceDefinition) = nil")
	}
	props := crd.Properties["spec"].Properties["versions"].Items.Schema.Properties["schema"].Properties["openAPIV3Schema"]
	if props.Properties["type"].Type[0] != "string" {
		t.Fatalf("openAPIV3Schema.type = %+v, want a string", props.Properties["type"].SchemaProps)
	}
	if nested := props.Properties["not"]; nested.Ref.GetURL() != nil || len(nested.Properties) != 0 || !nested.Type.Contains("object") {
		t.Errorf("openAPIV3Schema.not = %+v, want an empty object", nested.SchemaProps)
	}
}

func TestResolveSchemaUnknown(t *testing.T) {
	s := New(registry.NewCatalogue(), Options{})
	if got := s.ResolveSchema(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}); got != nil {
		t.Errorf("ResolveSchema(Gadget) = %+v, want nil", got)
	}
}
