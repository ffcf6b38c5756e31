package openapimarkers

import (
	"encoding/json"
	"maps"
	"testing"

	openapiutil "k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

const (
	v3RefPrefix = "#/components/schemas/"
	v2RefPrefix = "#/definitions/"
)

// upstreamDefinitions are kube-apiserver's definitions, as its
// controlplane config wraps them (enums pruned only when OpenAPIEnums is
// off), with refs under prefix.
func upstreamDefinitions(prefix string) map[string]common.OpenAPIDefinition {
	get := openapiutil.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	return get(func(name string) spec.Ref { return spec.MustCreateRef(prefix + name) })
}

// v3Form is a definition's v3 schema: the embedded v2 form left out.
func v3Form(d common.OpenAPIDefinition) spec.Schema {
	s := d.Schema
	if _, ok := s.Extensions[common.ExtensionV2Schema]; ok {
		s.Extensions = maps.Clone(s.Extensions)
		delete(s.Extensions, common.ExtensionV2Schema)
		if len(s.Extensions) == 0 {
			s.Extensions = nil
		}
	}
	return s
}

// v2Form is a definition's v2 schema: the embedded v2 form when there is
// one.
func v2Form(d common.OpenAPIDefinition) spec.Schema {
	if v2, ok := d.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
		return v2
	}
	return d.Schema
}

// asMap is the JSON object form of v.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
