package match

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Configuration errors of policies and bindings, with upstream's texts. The
// policy plugins prefix them ("failed to configure policy: ", "failed to
// configure binding: ").
var (
	ErrNoMatchConstraints   = errors.New("policy contained no match constraints, a required field")
	ErrNilNamespaceSelector = errors.New("a nil namespace selector was passed, please ensure selectors are initialized properly")
	ErrNilObjectSelector    = errors.New("a nil object selector was passed, please ensure selectors are initialized properly")
)

// Criteria is the compiled scope of one webhook, policy or binding. It is
// immutable and safe for concurrent use.
type Criteria struct {
	policy      bool // policy semantics: exclude rules, names, error forms
	equivalent  bool // matchPolicy Equivalent
	anyResource bool // policy with no resourceRules: every resource
	rules       []rule
	exclude     []rule
	namespace   selector
	object      selector
	err         error // configuration error, reported by every Match
}

// Webhook compiles the scope of a validating or mutating webhook. A nil
// selector matches nothing and a nil matchPolicy means Exact, as upstream
// (API defaulting sets {} and Equivalent). Invalid selectors are not
// refused: as upstream, Match reports them as a 500 when the rules match.
func Webhook(rules []v1.RuleWithOperations, policy *v1.MatchPolicyType, namespaceSelector, objectSelector *metav1.LabelSelector) *Criteria {
	c := &Criteria{
		equivalent: policy != nil && *policy == v1.Equivalent,
		rules:      make([]rule, len(rules)),
		namespace:  compileSelector(namespaceSelector),
		object:     compileSelector(objectSelector),
	}
	for i, r := range rules {
		c.rules[i] = compileRule(r, nil)
	}
	return c
}

// Policy compiles a policy's spec.matchConstraints. A nil constraint or nil
// selector is a configuration error that every Match reports (as upstream
// reports it on every request).
func Policy(mr *v1.MatchResources) *Criteria {
	if mr == nil {
		return &Criteria{policy: true, err: ErrNoMatchConstraints}
	}
	return compileResources(mr)
}

// Binding compiles a binding's spec.matchResources, which only narrows its
// policy: nil matches every request, and an empty resourceRules list means
// every resource. Nil selectors are configuration errors, as for Policy.
func Binding(mr *v1.MatchResources) *Criteria {
	if mr == nil {
		return &Criteria{policy: true, anyResource: true,
			namespace: selector{every: true}, object: selector{every: true}}
	}
	return compileResources(mr)
}

func compileResources(mr *v1.MatchResources) *Criteria {
	switch {
	case mr.NamespaceSelector == nil:
		return &Criteria{policy: true, err: ErrNilNamespaceSelector}
	case mr.ObjectSelector == nil:
		return &Criteria{policy: true, err: ErrNilObjectSelector}
	}
	c := &Criteria{
		policy:      true,
		equivalent:  mr.MatchPolicy != nil && *mr.MatchPolicy == v1.Equivalent,
		anyResource: len(mr.ResourceRules) == 0,
		rules:       compileNamed(mr.ResourceRules),
		exclude:     compileNamed(mr.ExcludeResourceRules),
		namespace:   compileSelector(mr.NamespaceSelector),
		object:      compileSelector(mr.ObjectSelector),
	}
	return c
}

func compileNamed(rules []v1.NamedRuleWithOperations) []rule {
	out := make([]rule, len(rules))
	for i, r := range rules {
		out[i] = compileRule(r.RuleWithOperations, r.ResourceNames)
	}
	return out
}

// Err returns the configuration error of a policy or binding, or nil.
func (c *Criteria) Err() error { return c.err }

// Match decides whether the request is in scope, in upstream's order:
// namespaceSelector, objectSelector, (policies) excludeResourceRules, rules
// on the request's resource, then rules on its equivalent resources for
// matchPolicy Equivalent. Selector errors are reported only when the rules
// match. The caller evaluates matchConditions after a Matched decision.
func (c *Criteria) Match(r *Request) Decision {
	if c.err != nil {
		return Decision{Reason: Errored, Err: c.err}
	}
	nsOK, nsErr := r.namespaceSelected(&c.namespace)
	if !nsOK && nsErr == nil {
		return Decision{Reason: SkipNamespaceSelector}
	}
	objOK, objErr := r.objectSelected(&c.object)
	if !objOK && objErr == nil {
		return Decision{Reason: SkipObjectSelector}
	}
	d := c.matchResources(r)
	switch {
	case d.Reason != Matched:
		return d
	case nsErr != nil:
		return Decision{Reason: Errored, Err: nsErr}
	case objErr != nil:
		return Decision{Reason: Errored, Err: objErr}
	}
	return d
}

func (c *Criteria) matchResources(r *Request) Decision {
	if len(c.exclude) > 0 {
		switch d := c.find(r, c.exclude); d.Reason {
		case Matched:
			return Decision{Reason: SkipExcludeRule}
		case Errored:
			return d
		}
	}
	if c.anyResource {
		a := r.attrs
		return Decision{Reason: Matched, Resource: a.Resource, Subresource: a.Subresource, Kind: a.Kind}
	}
	return c.find(r, c.rules)
}

// find returns the first rule that matches the request's own resource, else
// (for Equivalent) the first rule, in rule order, that matches one of the
// equivalent resources, in the catalogue's order.
func (c *Criteria) find(r *Request, rules []rule) Decision {
	a := r.attrs
	miss := SkipRule
	for i := range rules {
		switch rules[i].test(a, a.Resource) {
		case ruleHit:
			if rules[i].named(a.Name) {
				return Decision{Reason: Matched, Resource: a.Resource, Subresource: a.Subresource, Kind: a.Kind}
			}
			miss = closer(miss, SkipResourceName)
		case scopeMiss:
			miss = closer(miss, SkipScope)
		}
	}
	if !c.equivalent {
		return Decision{Reason: miss}
	}
	eqs := r.equivalents()
	for i := range rules {
		for _, gvr := range eqs {
			if gvr == a.Resource {
				continue // already tried
			}
			switch rules[i].test(a, gvr) {
			case scopeMiss:
				miss = closer(miss, SkipScope)
				continue
			case ruleMiss:
				continue
			}
			kind := r.kindFor(gvr)
			if kind.Empty() {
				return Decision{Reason: Errored, Err: c.unknownKind(gvr)}
			}
			if !rules[i].named(a.Name) {
				miss = closer(miss, SkipResourceName)
				continue
			}
			return Decision{Reason: Matched, Equivalent: true, Resource: gvr, Subresource: a.Subresource, Kind: kind}
		}
	}
	return Decision{Reason: miss}
}

// closer returns the miss reason nearer to a match: names, then scope.
func closer(a, b Reason) Reason {
	rank := func(x Reason) int {
		switch x {
		case SkipResourceName:
			return 2
		case SkipScope:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// unknownKind is the error for an equivalent resource without a kind: a 500
// for webhooks, a plain error for policies, as upstream.
func (c *Criteria) unknownKind(gvr schema.GroupVersionResource) error {
	err := fmt.Errorf("unable to convert to %v: unknown kind", gvr)
	if c.policy {
		return err
	}
	return apierrors.NewInternalError(err)
}
