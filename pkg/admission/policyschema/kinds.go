// Package policyschema types admission policies' expressions by the
// schemas of the kinds they match, as upstream's policy type checker does:
// the kinds a policy's rules name, their CEL types, custom resources'
// schemas. It is apart from the policy plugins (pkg/admission/policies),
// which use it, so that what only types expressions (pkg/lint, the
// registry's write warnings) does not depend on the plugins.
package policyschema

import (
	"fmt"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// MaxTypesToCheck bounds the kinds a policy is type-checked against.
const MaxTypesToCheck = 10

// SchemaResolver gives the OpenAPI schema of a kind (references resolved),
// or nil when it has none.
type SchemaResolver interface {
	ResolveSchema(gvk schema.GroupVersionKind) *spec.Schema
}

// KindDeclType is the CEL type of the schema schemas resolves for gvk, as
// upstream's type checker declares object and params (a resource root:
// apiVersion, kind and metadata's name and generateName always there, list
// and map sizes from maxItems and maxProperties or estimated from the
// request size limit), or nil when gvk has no schema.
func KindDeclType(schemas SchemaResolver, gvk schema.GroupVersionKind) *apiservercel.DeclType {
	s := schemas.ResolveSchema(gvk)
	if s == nil {
		return nil
	}
	t := common.SchemaDeclType(&openapi.Schema{Schema: s}, true)
	if t == nil {
		return nil
	}
	return t.MaybeAssignTypeName(fmt.Sprintf("%s.%s.%s", gvk.Group, gvk.Version, gvk.Kind))
}

// MatchedKinds lists the kinds upstream's type checker checks a policy
// with match constraints mc against: those its resource rules name without
// wildcards (no "*" group, version or resource, no subresource), as
// kindsFor maps them, sorted, at most ten.
func MatchedKinds(mc *admissionregistrationv1.MatchResources, kindsFor func(schema.GroupVersionResource) []schema.GroupVersionKind) []schema.GroupVersionKind {
	if mc == nil || kindsFor == nil {
		return nil
	}
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	for _, r := range mc.ResourceRules {
		groups, versions := explicit(r.APIGroups), explicit(r.APIVersions)
		var resources []string
		for _, res := range r.Resources {
			if !strings.ContainsAny(res, "*/") {
				resources = append(resources, res)
			}
		}
		count := 0
		for _, g := range groups {
			for _, v := range versions {
				for _, res := range resources {
					for _, k := range kindsFor(schema.GroupVersionResource{Group: g, Version: v, Resource: res}) {
						if k.Empty() {
							continue
						}
						if !seen[k] {
							seen[k] = true
							out = append(out, k)
						}
						if count++; count == MaxTypesToCheck {
							return sortKinds(out)
						}
					}
				}
			}
		}
	}
	return sortKinds(out)
}

// explicit returns the values sorted, or nil when one is a wildcard.
func explicit(values []string) []string {
	for _, v := range values {
		if strings.Contains(v, "*") {
			return nil
		}
	}
	out := append([]string(nil), values...)
	sort.Strings(out)
	return out
}

func sortKinds(list []schema.GroupVersionKind) []schema.GroupVersionKind {
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
	return list
}
