package lint

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/pkg/admission/policyschema"
)

// Schemas tells the linter what kube-apiserver knows of the kinds a policy
// matches: the kinds served at a resource (a REST mapper's KindsFor) and
// each kind's OpenAPI schema with references resolved, so that CEL costs
// are estimated with the types upstream's type checker gives object,
// oldObject and params. admitd's built-in kinds come from its OpenAPI
// service (the admitd command passes them); the CustomResourceDefinitions
// of a Set are added on top.
type Schemas interface {
	policyschema.SchemaResolver
	KindsFor(gvr schema.GroupVersionResource) []schema.GroupVersionKind
}

// setSchemas resolves the custom resources a Set's CRDs define, then asks
// next (which may be nil).
type setSchemas struct {
	crds []*apiextensionsv1.CustomResourceDefinition
	next Schemas
}

// schemasOf returns the schemas of s's CRDs over next.
func schemasOf(s *Set, next Schemas) setSchemas {
	out := setSchemas{next: next}
	for _, u := range s.Params {
		if u.GetAPIVersion() != "apiextensions.k8s.io/v1" || u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd) == nil {
			out.crds = append(out.crds, crd)
		}
	}
	return out
}

// KindsFor returns the kind of the CRD that serves gvr, or asks next.
func (c setSchemas) KindsFor(gvr schema.GroupVersionResource) []schema.GroupVersionKind {
	for _, crd := range c.crds {
		if crd.Spec.Group == gvr.Group && crd.Spec.Names.Plural == gvr.Resource && servesVersion(crd, gvr.Version) {
			return []schema.GroupVersionKind{{Group: gvr.Group, Version: gvr.Version, Kind: crd.Spec.Names.Kind}}
		}
	}
	if c.next == nil {
		return nil
	}
	return c.next.KindsFor(gvr)
}

// ResolveSchema returns the schema of a CRD's kind, or asks next.
func (c setSchemas) ResolveSchema(gvk schema.GroupVersionKind) *spec.Schema {
	for _, crd := range c.crds {
		if crd.Spec.Group == gvk.Group && crd.Spec.Names.Kind == gvk.Kind && servesVersion(crd, gvk.Version) {
			return policyschema.CRDSchema(crd, gvk.Version)
		}
	}
	if c.next == nil {
		return nil
	}
	return c.next.ResolveSchema(gvk)
}

func servesVersion(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Served {
			return true
		}
	}
	return false
}
