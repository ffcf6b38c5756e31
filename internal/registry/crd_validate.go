package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// crdPluralNameRule is the detail of upstream's error for a definition whose
// name is not spec.names.plural+"."+spec.group.
const crdPluralNameRule = `must be spec.names.plural+"."+spec.group`

// validateCRD checks a new CustomResourceDefinition as upstream's strategy
// does, with the apiextensions validation library: names, versions,
// structural schemas, defaults, x-kubernetes-validations rules compiled with
// their estimated cost bounded, conversion and printer columns. The status it
// checks is the one upstream's create starts from: stored versions only.
func validateCRD(obj runtime.Object) field.ErrorList {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil
	}
	in, err := internalCRD(crd, apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: crd.Status.StoredVersions})
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	return withoutGenericMetadata(crdvalidation.ValidateCustomResourceDefinition(context.Background(), in))
}

// validateCRDUpdate checks an update as upstream's strategy does; the status
// checked is old's (an update of the main resource keeps it) with the stored
// versions the update adds.
func validateCRDUpdate(obj, old runtime.Object) field.ErrorList {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	oldCRD, oldOK := old.(*apiextensionsv1.CustomResourceDefinition)
	if !ok || !oldOK {
		return nil
	}
	status := *oldCRD.Status.DeepCopy()
	status.StoredVersions = crd.Status.StoredVersions
	in, err := internalCRD(crd, status)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	oldIn, err := internalCRD(oldCRD, oldCRD.Status)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	return withoutGenericMetadata(crdvalidation.ValidateCustomResourceDefinitionUpdate(context.Background(), in, oldIn))
}

// internalCRD converts crd, with status in place of its own, to the
// internal form upstream's validation reads.
func internalCRD(crd *apiextensionsv1.CustomResourceDefinition, status apiextensionsv1.CustomResourceDefinitionStatus) (*apiextensions.CustomResourceDefinition, error) {
	in := crd.DeepCopy()
	in.Status = status
	out := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(in, out, nil); err != nil {
		return nil, fmt.Errorf("converting the definition: %w", err)
	}
	return out, nil
}

// withoutGenericMetadata drops the metadata errors admitd's generic metadata
// validation already reports (it runs first, as upstream's would), keeping
// the definition's own name rule.
func withoutGenericMetadata(errs field.ErrorList) field.ErrorList {
	return slices.DeleteFunc(errs, func(e *field.Error) bool {
		generic := e.Field == "metadata" || strings.HasPrefix(e.Field, "metadata.")
		return generic && e.Detail != crdPluralNameRule
	})
}

// crdWarnings are upstream's warnings on a definition's write: formats the
// schema validator does not recognize and set-typed lists of non-scalars;
// an update warns only of those the old definition did not have.
func crdWarnings(obj, old runtime.Object) []string {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	if oldCRD, ok := old.(*apiextensionsv1.CustomResourceDefinition); ok {
		for _, w := range crdSchemaWarnings(oldCRD) {
			seen[w] = true
		}
	}
	var out []string
	for _, w := range crdSchemaWarnings(crd) {
		if !seen[w] {
			out = append(out, w)
		}
	}
	return out
}

// crdSchemaWarnings lists a definition's format warnings (in schema order)
// then its set-list warnings (sorted, each once).
func crdSchemaWarnings(crd *apiextensionsv1.CustomResourceDefinition) []string {
	compat := environment.DefaultCompatibilityVersion()
	var formats []string
	sets := map[string]bool{}
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		s := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, s, nil); err != nil {
			continue
		}
		crdvalidation.SchemaHas(s, func(p *apiextensions.JSONSchemaProps) bool {
			if p.Format != "" {
				probe := &spec.Schema{SchemaProps: spec.SchemaProps{Format: p.Format, Type: []string{p.Type}}}
				for _, f := range apiservervalidation.GetUnrecognizedFormats(probe, compat) {
					formats = append(formats, fmt.Sprintf("unrecognized format %q", f))
				}
			}
			if p.XListType != nil && *p.XListType == "set" && p.Items != nil && p.Items.Schema != nil {
				if t := p.Items.Schema.Type; t == "object" || t == "array" {
					sets[fmt.Sprintf("x-kubernetes-list-type: set for items of type %q is not supported by server-side apply or CEL validation rules", t)] = true
				}
			}
			return false
		})
	}
	setWarnings := make([]string, 0, len(sets))
	for w := range sets {
		setWarnings = append(setWarnings, w)
	}
	slices.Sort(setWarnings)
	return append(formats, setWarnings...)
}
