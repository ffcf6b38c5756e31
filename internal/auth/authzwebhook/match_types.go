package authzwebhook

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// object declares a CEL object type whose fields are all optional.
func object(name string, fields map[string]*apiservercel.DeclType) *apiservercel.DeclType {
	decl := make(map[string]*apiservercel.DeclField, len(fields))
	for n, t := range fields {
		decl[n] = apiservercel.NewDeclField(n, t, false, nil, nil)
	}
	return apiservercel.NewObjectType(name, decl)
}

var stringList = apiservercel.NewListType(apiservercel.StringType, -1)

// requestType is the CEL type of request, the SubjectAccessReview spec,
// with the type names upstream gives it.
func requestType() *apiservercel.DeclType {
	str := apiservercel.StringType
	requirement := object("kubernetes.SelectorRequirement", map[string]*apiservercel.DeclType{
		"key": str, "operator": str, "values": stringList})
	selector := func(name string) *apiservercel.DeclType {
		return object(name, map[string]*apiservercel.DeclType{
			"rawSelector": str, "requirements": apiservercel.NewListType(requirement, -1)})
	}
	resource := object("kubernetes.ResourceAttributes", map[string]*apiservercel.DeclType{
		"namespace": str, "verb": str, "group": str, "version": str, "resource": str, "subresource": str, "name": str,
		"fieldSelector": selector("kubernetes.FieldSelectorAttributes"),
		"labelSelector": selector("kubernetes.LabelSelectorAttributes"),
	})
	nonResource := object("kubernetes.NonResourceAttributes", map[string]*apiservercel.DeclType{"path": str, "verb": str})
	return object("kubernetes.SubjectAccessReviewSpec", map[string]*apiservercel.DeclType{
		"resourceAttributes": resource, "nonResourceAttributes": nonResource,
		"user": str, "groups": stringList, "uid": str,
		"extra": apiservercel.NewMapType(str, stringList, -1),
	})
}

// requestValue is spec as the value of request: absent attributes are
// absent fields, so has() tells them apart.
func requestValue(spec authorizationv1.SubjectAccessReviewSpec) map[string]any {
	extra := map[string][]string{}
	for k, v := range spec.Extra {
		extra[k] = v
	}
	groups := spec.Groups
	if groups == nil {
		groups = []string{}
	}
	out := map[string]any{"user": spec.User, "groups": groups, "uid": spec.UID, "extra": extra}
	if r := spec.ResourceAttributes; r != nil {
		ra := map[string]any{"namespace": r.Namespace, "verb": r.Verb, "group": r.Group, "version": r.Version,
			"resource": r.Resource, "subresource": r.Subresource, "name": r.Name}
		if r.FieldSelector != nil {
			ra["fieldSelector"] = selectorValue(r.FieldSelector.RawSelector, fieldReqs(r.FieldSelector.Requirements))
		}
		if r.LabelSelector != nil {
			ra["labelSelector"] = selectorValue(r.LabelSelector.RawSelector, labelReqs(r.LabelSelector.Requirements))
		}
		out["resourceAttributes"] = ra
	}
	if n := spec.NonResourceAttributes; n != nil {
		out["nonResourceAttributes"] = map[string]any{"path": n.Path, "verb": n.Verb}
	}
	return out
}

func selectorValue(raw string, reqs []map[string]any) map[string]any {
	if raw != "" {
		return map[string]any{"rawSelector": raw}
	}
	return map[string]any{"requirements": reqs}
}

func fieldReqs(in []metav1.FieldSelectorRequirement) []map[string]any {
	out := []map[string]any{}
	for _, r := range in {
		out = append(out, map[string]any{"key": r.Key, "operator": string(r.Operator), "values": nonNil(r.Values)})
	}
	return out
}

func labelReqs(in []metav1.LabelSelectorRequirement) []map[string]any {
	out := []map[string]any{}
	for _, r := range in {
		out = append(out, map[string]any{"key": r.Key, "operator": string(r.Operator), "values": nonNil(r.Values)})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
