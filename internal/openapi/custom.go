package openapi

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	openapiv2 "k8s.io/apiextensions-apiserver/pkg/controller/openapi/v2"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/internal/registry"
)

const (
	objectMetaName = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	listMetaName   = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
	typeMetaName   = "io.k8s.apimachinery.pkg.apis.meta.v1.TypeMeta"
	gvkExtension   = "x-kubernetes-group-version-kind"
)

var (
	partialObjectMetaDoc     = metav1beta1.PartialObjectMetadata{}.SwaggerDoc()
	partialObjectMetaListDoc = metav1beta1.PartialObjectMetadataList{}.SwaggerDoc()
)

// customDefinitions returns the definitions of a custom resource's kind and
// list kind, as apiextensions-apiserver publishes them: the version's
// structural schema with apiVersion, kind and metadata added. typeMeta is
// the TypeMeta definition (for the apiVersion and kind properties).
func customDefinitions(res *registry.Resource, typeMeta spec.Schema) map[string]*definition {
	gvk := res.GroupVersionKind()
	kind := customModelName(gvk)
	list := customModelName(gvk.GroupVersion().WithKind(res.ListKind))
	ss := structural(res.OpenAPIV3Schema)
	return map[string]*definition{
		kind: {
			schema: *customSchema(ss, gvk, false, typeMeta),
			v2:     customSchema(ss, gvk, true, typeMeta),
			deps:   []string{objectMetaName},
		},
		list: {
			schema: customListSchema(res, kind, typeMeta),
			deps:   []string{listMetaName, kind},
		},
	}
}

// customModelName is upstream's name of a custom kind: the group reversed,
// then version and kind (com.example.stable.v1.CronTab).
func customModelName(gvk schema.GroupVersionKind) string {
	parts := strings.Split(gvk.Group, ".")
	slices.Reverse(parts)
	return fmt.Sprintf("%s.%s.%s", strings.Join(parts, "."), gvk.Version, gvk.Kind)
}

// structural returns the unfolded structural form of a schema, or nil when
// there is none or it is not structural (upstream then publishes a bare
// object).
func structural(in *apiextensionsv1.JSONSchemaProps) *structuralschema.Structural {
	if in == nil {
		return nil
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(in, internal, nil); err != nil {
		return nil
	}
	ss, err := structuralschema.NewStructural(internal)
	if err != nil || len(structuralschema.ValidateStructural(nil, ss)) > 0 {
		return nil
	}
	return ss.Unfold()
}

// customSchema is apiextensions-apiserver's buildKubeNative: refs point at
// v3RefPrefix in both forms (the v2 document rewrites them).
func customSchema(ss *structuralschema.Structural, gvk schema.GroupVersionKind, v2 bool, typeMeta spec.Schema) *spec.Schema {
	var s *spec.Schema
	switch {
	case ss == nil, v2 && ss.XPreserveUnknownFields:
		// No properties: kubectl would otherwise forbid everything else.
		s = &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}}
	default:
		if v2 {
			ss = openapiv2.ToStructuralOpenAPIV2(ss)
		}
		s = ss.ToKubeOpenAPI()
		s.SetProperty("metadata", *spec.RefSchema(v3RefPrefix + objectMetaName).WithDescription(partialObjectMetaDoc["metadata"]))
		addTypeMetaProperties(s, typeMeta)
		addEmbeddedProperties(s, v2, typeMeta)
	}
	s.AddExtension(gvkExtension, []any{map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}})
	return s
}

func addTypeMetaProperties(s *spec.Schema, typeMeta spec.Schema) {
	s.SetProperty("apiVersion", typeMeta.Properties["apiVersion"])
	s.SetProperty("kind", typeMeta.Properties["kind"])
}

// addEmbeddedProperties gives every x-kubernetes-embedded-resource object
// apiVersion, kind and metadata, as upstream does.
func addEmbeddedProperties(s *spec.Schema, v2 bool, typeMeta spec.Schema) {
	if s == nil {
		return
	}
	for k, v := range s.Properties {
		addEmbeddedProperties(&v, v2, typeMeta)
		s.Properties[k] = v
	}
	if s.Items != nil {
		addEmbeddedProperties(s.Items.Schema, v2, typeMeta)
	}
	if s.AdditionalProperties != nil {
		addEmbeddedProperties(s.AdditionalProperties.Schema, v2, typeMeta)
	}
	if preserve, ok := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); ok && preserve && v2 {
		return
	}
	if embedded, ok := s.Extensions.GetBool("x-kubernetes-embedded-resource"); !ok || !embedded {
		return
	}
	apiVersion, kind := typeMeta.Properties["apiVersion"], typeMeta.Properties["kind"]
	s.SetProperty("apiVersion", *apiVersion.WithDescription("apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"))
	s.SetProperty("kind", *kind.WithDescription("kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"))
	s.SetProperty("metadata", *spec.RefSchema(v3RefPrefix + objectMetaName).WithDescription(partialObjectMetaDoc["metadata"]))
	for _, r := range []string{"kind", "apiVersion"} {
		if !slices.Contains(s.Required, r) {
			s.Required = append(s.Required, r)
		}
	}
}

// customListSchema is upstream's list schema of a custom kind.
func customListSchema(res *registry.Resource, kind string, typeMeta spec.Schema) spec.Schema {
	doc := fmt.Sprintf("List of %s. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", res.Resource)
	s := new(spec.Schema).
		Typed("object", "").
		WithDescription(fmt.Sprintf("%s is a list of %s", res.ListKind, res.Kind)).
		WithRequired("items").
		SetProperty("items", *spec.ArrayProperty(spec.RefSchema(v3RefPrefix + kind)).WithDescription(doc)).
		SetProperty("metadata", *spec.RefSchema(v3RefPrefix + listMetaName).WithDescription(partialObjectMetaListDoc["metadata"]))
	addTypeMetaProperties(s, typeMeta)
	s.AddExtension(gvkExtension, []any{map[string]any{"group": res.Group, "version": res.Version, "kind": res.ListKind}})
	return *s
}
