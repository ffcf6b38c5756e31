package openapi

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission/policyschema"
)

// PolicySchemas gives admission policies' type checking and cost
// estimation (pkg/lint.Schemas) what kube-apiserver's type checker knows:
// the kind served at a resource of Catalogue, and its schema — a built-in
// kind's from Service, a custom resource's from its CRD version's schema as
// the catalogue holds it. It is safe for concurrent use.
type PolicySchemas struct {
	Service   *Service
	Catalogue *registry.Catalogue
}

// KindsFor returns the kind the catalogue serves at gvr, if any.
func (p PolicySchemas) KindsFor(gvr schema.GroupVersionResource) []schema.GroupVersionKind {
	if r, ok := p.Catalogue.Lookup(gvr); ok {
		return []schema.GroupVersionKind{r.GroupVersionKind()}
	}
	return nil
}

// ResolveSchema returns gvk's schema with references resolved, nil when
// the catalogue does not serve gvk.
func (p PolicySchemas) ResolveSchema(gvk schema.GroupVersionKind) *spec.Schema {
	if s := p.Service.ResolveSchema(gvk); s != nil {
		return s
	}
	r, ok := p.Catalogue.LookupKind(gvk)
	if !ok || !r.Unstructured {
		return nil
	}
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: gvk.Version,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: r.OpenAPIV3Schema}}}}}
	return policyschema.CRDSchema(crd, gvk.Version)
}
