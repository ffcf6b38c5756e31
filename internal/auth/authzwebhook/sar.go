package authzwebhook

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/admitd/admitd/internal/auth"
)

// maxCachedAttrSize bounds the total length of the attributes a client
// controls (names, paths...) for a decision to be cached, as upstream: a
// client cannot fill the cache with huge keys.
const maxCachedAttrSize = 10000

// specFor is the SubjectAccessReview spec that asks about a.
func specFor(a auth.Attributes) authorizationv1.SubjectAccessReviewSpec {
	spec := authorizationv1.SubjectAccessReviewSpec{
		User:   a.User.Username,
		UID:    a.User.UID,
		Groups: a.User.Groups,
	}
	if len(a.User.Extra) > 0 {
		spec.Extra = make(map[string]authorizationv1.ExtraValue, len(a.User.Extra))
		for k, v := range a.User.Extra {
			spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	if !a.ResourceRequest {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: a.Path, Verb: a.Verb}
		return spec
	}
	spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
		Namespace: a.Namespace, Verb: a.Verb, Group: a.APIGroup, Version: a.APIVersion,
		Resource: a.Resource, Subresource: a.Subresource, Name: a.Name,
	}
	if reqs := fieldRequirements(a); len(reqs) > 0 {
		spec.ResourceAttributes.FieldSelector = &authorizationv1.FieldSelectorAttributes{Requirements: reqs}
	}
	if reqs := labelRequirements(a); len(reqs) > 0 {
		spec.ResourceAttributes.LabelSelector = &authorizationv1.LabelSelectorAttributes{Requirements: reqs}
	}
	return spec
}

// fieldRequirements converts a's field selector to the SAR's form. An
// operator the SAR cannot express is left out: requirements are ANDed, so
// the question asked is only broader.
func fieldRequirements(a auth.Attributes) []metav1.FieldSelectorRequirement {
	var out []metav1.FieldSelectorRequirement
	for _, r := range a.FieldSelector {
		var op metav1.FieldSelectorOperator
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals, selection.In:
			op = metav1.FieldSelectorOpIn
		case selection.NotEquals, selection.NotIn:
			op = metav1.FieldSelectorOpNotIn
		default:
			continue
		}
		out = append(out, metav1.FieldSelectorRequirement{Key: r.Field, Operator: op, Values: []string{r.Value}})
	}
	return out
}

// labelRequirements converts a's label selector as fieldRequirements does.
func labelRequirements(a auth.Attributes) []metav1.LabelSelectorRequirement {
	var out []metav1.LabelSelectorRequirement
	for _, r := range a.LabelSelector {
		var op metav1.LabelSelectorOperator
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			op = metav1.LabelSelectorOpIn
		case selection.NotEquals, selection.NotIn:
			op = metav1.LabelSelectorOpNotIn
		case selection.Exists:
			op = metav1.LabelSelectorOpExists
		case selection.DoesNotExist:
			op = metav1.LabelSelectorOpDoesNotExist
		default:
			continue
		}
		req := metav1.LabelSelectorRequirement{Key: r.Key(), Operator: op}
		if vals := r.ValuesUnsorted(); len(vals) > 0 {
			req.Values = vals
		}
		out = append(out, req)
	}
	return out
}

// cacheable reports whether the decision on a may be cached.
func cacheable(a auth.Attributes) bool {
	n := len(a.Namespace) + len(a.Verb) + len(a.APIGroup) + len(a.APIVersion) +
		len(a.Resource) + len(a.Subresource) + len(a.Name) + len(a.Path)
	return n < maxCachedAttrSize
}

// v1beta1Spec is spec in authorization.k8s.io/v1beta1, whose only
// difference on the wire is the name of the groups field ("group").
func v1beta1Spec(spec authorizationv1.SubjectAccessReviewSpec) authorizationv1beta1.SubjectAccessReviewSpec {
	out := authorizationv1beta1.SubjectAccessReviewSpec{User: spec.User, UID: spec.UID, Groups: spec.Groups}
	if spec.Extra != nil {
		out.Extra = make(map[string]authorizationv1beta1.ExtraValue, len(spec.Extra))
		for k, v := range spec.Extra {
			out.Extra[k] = authorizationv1beta1.ExtraValue(v)
		}
	}
	if r := spec.ResourceAttributes; r != nil {
		out.ResourceAttributes = &authorizationv1beta1.ResourceAttributes{
			Namespace: r.Namespace, Verb: r.Verb, Group: r.Group, Version: r.Version,
			Resource: r.Resource, Subresource: r.Subresource, Name: r.Name,
			FieldSelector: r.FieldSelector, LabelSelector: r.LabelSelector,
		}
	}
	if n := spec.NonResourceAttributes; n != nil {
		out.NonResourceAttributes = &authorizationv1beta1.NonResourceAttributes{Path: n.Path, Verb: n.Verb}
	}
	return out
}
