package registry

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CustomResources returns the resources a CustomResourceDefinition serves,
// one per served version, in the definition's version order.
func CustomResources(crd *apiextensionsv1.CustomResourceDefinition) []*Resource {
	storage := ""
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			storage = v.Name
		}
	}
	names := crd.Spec.Names
	var out []*Resource
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		r := &Resource{
			GroupVersionResource: schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: names.Plural},
			Kind:                 names.Kind,
			ListKind:             names.ListKind,
			Singular:             names.Singular,
			ShortNames:           names.ShortNames,
			Categories:           names.Categories,
			Namespaced:           crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
			Verbs:                customResourceVerbs,
			TracksGeneration:     true,
			StorageVersion:       storage,
			Unstructured:         true,
			PrinterColumns:       v.AdditionalPrinterColumns,
			// upstream's custom resource validator: a DNS subdomain
			NameValidator: apivalidation.NameIsDNSSubdomain,
			FieldLabels:   selectableFields(v.SelectableFields),
		}
		if r.ListKind == "" {
			r.ListKind = names.Kind + "List"
		}
		if r.Singular == "" {
			r.Singular = lower(names.Kind)
		}
		if v.Subresources != nil && v.Subresources.Status != nil {
			r.StatusSubresource, r.ClearStatusOnCreate = true, true
			r.Subresources = append(r.Subresources, Subresource{Name: "status", Kind: r.GroupVersionKind(), Verbs: subVerbs})
		}
		if v.Subresources != nil && v.Subresources.Scale != nil {
			sc := v.Subresources.Scale
			r.Subresources = append(r.Subresources, scaleSub())
			r.ScaleSpecReplicasPath, r.ScaleStatusReplicasPath = jsonPath(sc.SpecReplicasPath), jsonPath(sc.StatusReplicasPath)
			if sc.LabelSelectorPath != nil {
				r.ScaleLabelSelectorPath = jsonPath(*sc.LabelSelectorPath)
			}
		}
		sortSubresources(r.Subresources)
		r.Strategy = customResourceStrategy(v.Schema)
		r.Strategy.Warnings = customResourceWarnings
		// a custom resource's update, status included, must name the
		// resourceVersion it replaces, as upstream's strategies require
		r.Strategy.RequireResourceVersion = true
		if v.Schema != nil {
			r.OpenAPIV3Schema = v.Schema.OpenAPIV3Schema
		}
		out = append(out, r)
	}
	return out
}

// customResourceStrategy prunes, defaults and validates with the version's
// structural schema. A schema that is not structural (which upstream
// refuses in a v1 definition) only prunes.
func customResourceStrategy(v *apiextensionsv1.CustomResourceValidation) Strategy {
	if v == nil || v.OpenAPIV3Schema == nil {
		return Strategy{}
	}
	if compiled, err := compileSchema(v.OpenAPIV3Schema); err == nil {
		return compiled.strategy()
	}
	s := v.OpenAPIV3Schema
	return Strategy{Default: func(obj runtime.Object) {
		if u, ok := obj.(interface{ UnstructuredContent() map[string]any }); ok {
			prune(u.UnstructuredContent(), s, true)
		}
	}}
}

// prune removes fields not declared by the schema, keeping apiVersion, kind
// and metadata at the root, and anything under
// x-kubernetes-preserve-unknown-fields.
func prune(obj map[string]any, s *apiextensionsv1.JSONSchemaProps, root bool) {
	if s == nil || (s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields) {
		return
	}
	for k, v := range obj {
		if root && (k == "apiVersion" || k == "kind" || k == "metadata") {
			continue
		}
		prop, ok := s.Properties[k]
		if !ok && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			prop, ok = *s.AdditionalProperties.Schema, true
		}
		if !ok {
			if s.AdditionalProperties != nil && s.AdditionalProperties.Allows {
				continue
			}
			delete(obj, k)
			continue
		}
		pruneValue(v, &prop)
	}
}

func pruneValue(v any, s *apiextensionsv1.JSONSchemaProps) {
	switch val := v.(type) {
	case map[string]any:
		prune(val, s, false)
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, item := range val {
				pruneValue(item, s.Items.Schema)
			}
		}
	}
}

// CRDResource is the catalogue entry of CustomResourceDefinitions.
var CRDResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// jsonPath splits a simple JSON path such as ".spec.replicas".
func jsonPath(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "."), ".")
}

// selectableFields are the field selector labels a custom resource version
// allows beside metadata.name (and metadata.namespace when namespaced): its
// selectableFields' JSON paths without the leading dot, as upstream's
// converter reads them.
func selectableFields(fields []apiextensionsv1.SelectableField) []string {
	var out []string
	for _, f := range fields {
		out = append(out, strings.TrimPrefix(f.JSONPath, "."))
	}
	return out
}

// customResourceVerbs are a custom resource's verbs in the order the
// apiextensions server lists them in discovery.
var customResourceVerbs = []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
