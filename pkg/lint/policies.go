package lint

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// policyRef is what the binding checks need of a policy.
type policyRef struct {
	obj       Object
	paramKind *v1.ParamKind
}

// bindingRef is what they need of a binding.
type bindingRef struct {
	obj      Object
	policy   string
	paramRef *v1.ParamRef
}

// lintPolicies checks validating and mutating policies against their
// bindings, and bindings against their params.
func lintPolicies(s *Set) []Finding {
	vaps, vapbs := map[string]policyRef{}, []bindingRef{}
	for _, p := range s.ValidatingPolicies {
		vaps[p.Name] = policyRef{s.originOf(p), p.Spec.ParamKind}
	}
	for _, b := range s.ValidatingBindings {
		vapbs = append(vapbs, bindingRef{s.originOf(b), b.Spec.PolicyName, b.Spec.ParamRef})
	}
	maps, mapbs := map[string]policyRef{}, []bindingRef{}
	for _, p := range s.MutatingPolicies {
		maps[p.Name] = policyRef{s.originOf(p), p.Spec.ParamKind}
	}
	for _, b := range s.MutatingBindings {
		mapbs = append(mapbs, bindingRef{s.originOf(b), b.Spec.PolicyName, b.Spec.ParamRef})
	}
	out := lintBindings(s, vaps, vapbs)
	return append(out, lintBindings(s, maps, mapbs)...)
}

func lintBindings(s *Set, policies map[string]policyRef, bindings []bindingRef) []Finding {
	var out []Finding
	bound := map[string]bool{}
	for _, b := range bindings {
		bound[b.policy] = true
		p, ok := policies[b.policy]
		if !ok {
			out = append(out, newFinding(BindingMissingPolicy, Warning, b.obj, "", "spec.policyName",
				fmt.Sprintf("%s %q binds policy %q, which does not exist", b.obj.Kind, b.obj.Name, b.policy)))
			continue
		}
		out = append(out, lintParams(s, p, b)...)
	}
	for name, p := range policies {
		if !bound[name] {
			out = append(out, newFinding(PolicyWithoutBinding, Warning, p.obj, "", "metadata.name",
				fmt.Sprintf("%s %q has no binding: it applies to no request", p.obj.Kind, name)))
		}
	}
	return out
}

// lintParams checks that a binding's paramRef fits its policy's paramKind
// and names a param that exists.
func lintParams(s *Set, p policyRef, b bindingRef) []Finding {
	switch {
	case p.paramKind == nil && b.paramRef == nil:
		return nil
	case p.paramKind == nil:
		return []Finding{newFinding(ParamKindMismatch, Warning, b.obj, "", "spec.paramRef",
			fmt.Sprintf("%s %q has a paramRef, but policy %q has no paramKind: the paramRef is ignored", b.obj.Kind, b.obj.Name, b.policy))}
	case b.paramRef == nil:
		return []Finding{newFinding(ParamKindMismatch, Warning, b.obj, "", "spec.paramRef",
			fmt.Sprintf("%s %q has no paramRef, but policy %q has paramKind %s %s: its expressions see params as null",
				b.obj.Kind, b.obj.Name, b.policy, p.paramKind.APIVersion, p.paramKind.Kind))}
	}
	if gv, err := schema.ParseGroupVersion(p.paramKind.APIVersion); err == nil && slices.Contains(s.unservedKinds, gv.WithKind(p.paramKind.Kind)) {
		return []Finding{newFinding(ParamKindMismatch, Error, b.obj, "", "spec.paramRef",
			fmt.Sprintf("%s %q binds policy %q, whose paramKind %s %s the server does not serve: every request it matches fails",
				b.obj.Kind, b.obj.Name, b.policy, p.paramKind.APIVersion, p.paramKind.Kind))}
	}
	if paramExists(s, p.paramKind, b.paramRef) {
		return nil
	}
	sev := Error
	if b.paramRef.ParameterNotFoundAction != nil && *b.paramRef.ParameterNotFoundAction == v1.AllowAction {
		sev = Warning
	}
	return []Finding{newFinding(BindingMissingParam, sev, b.obj, "", "spec.paramRef",
		fmt.Sprintf("%s %q refers to %s %s %s, which does not exist", b.obj.Kind, b.obj.Name,
			p.paramKind.APIVersion, p.paramKind.Kind, describeParamRef(b.paramRef)))}
}

func describeParamRef(r *v1.ParamRef) string {
	where := ""
	if r.Namespace != "" {
		where = " in namespace " + r.Namespace
	}
	if r.Name != "" {
		return fmt.Sprintf("%q%s", r.Name, where)
	}
	sel := "<none>"
	if r.Selector != nil {
		sel = metav1.FormatLabelSelector(r.Selector)
	}
	return fmt.Sprintf("selected by %q%s", sel, where)
}

// paramExists reports whether some object of kind pk satisfies r. A name
// without namespace matches an object of that name in any namespace (the
// request's namespace is only known per request).
func paramExists(s *Set, pk *v1.ParamKind, r *v1.ParamRef) bool {
	var sel labels.Selector
	if r.Name == "" {
		var err error
		if r.Selector == nil {
			return false
		}
		if sel, err = metav1.LabelSelectorAsSelector(r.Selector); err != nil {
			return false
		}
	}
	for _, obj := range paramCandidates(s, pk) {
		if r.Namespace != "" && obj.GetNamespace() != r.Namespace {
			continue
		}
		if (r.Name != "" && obj.GetName() == r.Name) || (sel != nil && sel.Matches(labels.Set(obj.GetLabels()))) {
			return true
		}
	}
	return false
}

// paramCandidates are the set's objects of the param kind.
func paramCandidates(s *Set, pk *v1.ParamKind) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	add := func(obj runtime.Object) {
		if u, err := toUnstructured(obj); err == nil {
			out = append(out, u)
		}
	}
	for _, u := range s.Params {
		if u.GetAPIVersion() == pk.APIVersion && u.GetKind() == pk.Kind {
			out = append(out, u)
		}
	}
	if pk.APIVersion == "v1" {
		switch pk.Kind {
		case "Namespace":
			for _, ns := range s.Namespaces {
				add(ns)
			}
		case "Service":
			for _, svc := range s.Services {
				add(svc)
			}
		}
	}
	return out
}
