package quota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/admitd/admitd/pkg/admission"
)

// Evaluator knows how objects of one resource consume quota.
type Evaluator interface {
	// GroupResource is the resource evaluated.
	GroupResource() schema.GroupResource
	// Handles reports whether a request may change the resource's usage.
	Handles(a *admission.Attributes) bool
	// Matches reports whether q constrains obj: its status.hard names a
	// resource this evaluator tracks and each of its scopes selects obj.
	Matches(q *corev1.ResourceQuota, obj runtime.Object) (bool, error)
	// MatchingResources returns the names of input this evaluator tracks.
	MatchingResources(input []corev1.ResourceName) []corev1.ResourceName
	// MatchingScopes returns the selectors of sel that select obj.
	MatchingScopes(obj runtime.Object, sel []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error)
	// UncoveredScopes returns the limited selectors whose scope name no
	// matched selector has.
	UncoveredScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) []corev1.ScopedResourceSelectorRequirement
	// Constraints checks that obj states what a quota tracking required
	// needs of it.
	Constraints(required []corev1.ResourceName, obj runtime.Object) error
	// Usage is what obj consumes.
	Usage(obj runtime.Object) (corev1.ResourceList, error)
}

// ScopeFunc reports whether one scope selector selects an object.
type ScopeFunc func(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error)

// noScopes selects nothing: the resource has no scopes.
func noScopes(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}

// QuotaSelectors returns the scope selectors of q: each spec.scopes entry
// as an Exists selector, then spec.scopeSelector's expressions.
func QuotaSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	out := make([]corev1.ScopedResourceSelectorRequirement, 0, len(q.Spec.Scopes))
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// matches is the Matches of every evaluator: q's status.hard names a
// resource tracks says the evaluator tracks, and every selector of q
// selects obj.
func matches(q *corev1.ResourceQuota, obj runtime.Object, tracks func(corev1.ResourceName) bool, scope ScopeFunc) (bool, error) {
	if q == nil {
		return false, fmt.Errorf("expected non-nil quota")
	}
	tracked := false
	for n := range q.Status.Hard {
		if tracks(n) {
			tracked = true
			break
		}
	}
	all := true
	for _, sel := range QuotaSelectors(q) {
		ok, err := scope(sel, obj)
		if err != nil {
			return false, err
		}
		all = all && ok
	}
	return tracked && all, nil
}

// matchingScopes returns the selectors scope says select obj.
func matchingScopes(obj runtime.Object, sels []corev1.ScopedResourceSelectorRequirement, scope ScopeFunc) ([]corev1.ScopedResourceSelectorRequirement, error) {
	out := []corev1.ScopedResourceSelectorRequirement{}
	for _, sel := range sels {
		ok, err := scope(sel, obj)
		if err != nil {
			return []corev1.ScopedResourceSelectorRequirement{}, fmt.Errorf("error on matching scope %v: %v", sel, err)
		}
		if ok {
			out = append(out, sel)
		}
	}
	return out, nil
}

// uncoveredByName returns the limited selectors whose scope name no
// matched selector has.
func uncoveredByName(limited, matched []corev1.ScopedResourceSelectorRequirement) []corev1.ScopedResourceSelectorRequirement {
	out := []corev1.ScopedResourceSelectorRequirement{}
	for _, l := range limited {
		covered := false
		for _, m := range matched {
			if m.ScopeName == l.ScopeName {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, l)
		}
	}
	return out
}

// selectorFor is the label selector of a scope selector: the scope name is
// the label key.
func selectorFor(sel corev1.ScopedResourceSelectorRequirement) (labels.Selector, error) {
	var op selection.Operator
	switch sel.Operator {
	case corev1.ScopeSelectorOpIn:
		op = selection.In
	case corev1.ScopeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.ScopeSelectorOpExists:
		op = selection.Exists
	case corev1.ScopeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	default:
		return nil, fmt.Errorf("%q is not a valid scope selector operator", sel.Operator)
	}
	r, err := labels.NewRequirement(string(sel.ScopeName), op, sel.Values)
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*r), nil
}

func one() resource.Quantity  { return *resource.NewQuantity(1, resource.DecimalSI) }
func zero() resource.Quantity { return resource.Quantity{Format: resource.DecimalSI} }

// ObjectCountName is the quota resource name counting objects of gr:
// count/<resource> for the core group, count/<resource>.<group> otherwise.
func ObjectCountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// objectCount counts the objects of one resource: each create charges one
// to count/<resource>.<group> and to its legacy alias, if any.
type objectCount struct {
	gr    schema.GroupResource
	names []corev1.ResourceName
}

// NewObjectCount returns the evaluator counting objects of gr, also under
// alias when not empty.
func NewObjectCount(gr schema.GroupResource, alias corev1.ResourceName) Evaluator {
	names := []corev1.ResourceName{ObjectCountName(gr)}
	if alias != "" {
		names = append(names, alias)
	}
	return &objectCount{gr: gr, names: names}
}

func (o *objectCount) GroupResource() schema.GroupResource { return o.gr }

// Handles creates of the resource itself.
func (o *objectCount) Handles(a *admission.Attributes) bool {
	return a.Subresource == "" && a.Operation == admission.Create
}

func (o *objectCount) Matches(q *corev1.ResourceQuota, obj runtime.Object) (bool, error) {
	return matches(q, obj, func(n corev1.ResourceName) bool { return containsName(o.names, n) }, noScopes)
}

func (o *objectCount) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return intersect(input, o.names)
}

func (o *objectCount) MatchingScopes(runtime.Object, []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (o *objectCount) UncoveredScopes(_, _ []corev1.ScopedResourceSelectorRequirement) []corev1.ScopedResourceSelectorRequirement {
	return []corev1.ScopedResourceSelectorRequirement{}
}

func (o *objectCount) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (o *objectCount) Usage(runtime.Object) (corev1.ResourceList, error) {
	out := make(corev1.ResourceList, len(o.names))
	for _, n := range o.names {
		out[n] = one()
	}
	return out, nil
}
