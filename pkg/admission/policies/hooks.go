package policies

import (
	"slices"
	"sort"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission/match"
)

// hook is one policy with its bindings: what a request is matched against.
// Hooks are immutable; their evaluator is compiled on first use and shared
// with later snapshots while the policy's resourceVersion is unchanged.
type hook struct {
	name     string
	criteria *match.Criteria
	// paramKind is nil for a policy without params; paramGVK is its parsed
	// form.
	paramKind *admissionregistrationv1.ParamKind
	paramGVK  schema.GroupVersionKind
	// failurePolicy is the policy's, Fail when unset.
	failurePolicy admissionregistrationv1.FailurePolicyType
	bindings      []*binding
	compiled      *compiledPolicy
}

// binding is one binding of a hook's policy.
type binding struct {
	name     string
	criteria *match.Criteria
	paramRef *admissionregistrationv1.ParamRef
	// actions are the validationActions (ValidatingAdmissionPolicy only).
	actions []admissionregistrationv1.ValidationAction
}

// denies reports whether a failed validation of the binding refuses the
// request: its validationActions include Deny.
func (b *binding) denies() bool { return slices.Contains(b.actions, admissionregistrationv1.Deny) }

// ignores reports whether the hook's errors are dropped.
func (h *hook) ignores() bool { return h.failurePolicy == admissionregistrationv1.Ignore }

// compiledPolicy compiles a policy's expressions once, on first use.
type compiledPolicy struct {
	rv      string
	once    sync.Once
	compile func() any
	value   any
}

func (c *compiledPolicy) get() any {
	c.once.Do(func() { c.value = c.compile() })
	return c.value
}

// hookSet is the compiled form of one snapshot for one plugin.
type hookSet struct {
	hooks []*hook
	index *match.Index
	// cache maps a policy name to its compiled evaluator, for reuse by the
	// next snapshot.
	cache map[string]*compiledPolicy
}

// policyDef is what hook building needs from either kind of policy.
type policyDef struct {
	name, rv         string
	paramKind        *admissionregistrationv1.ParamKind
	matchConstraints *admissionregistrationv1.MatchResources
	failurePolicy    *admissionregistrationv1.FailurePolicyType
	compile          func() any
}

// bindingDef is what hook building needs from either kind of binding.
type bindingDef struct {
	name, policyName string
	paramRef         *admissionregistrationv1.ParamRef
	matchResources   *admissionregistrationv1.MatchResources
	actions          []admissionregistrationv1.ValidationAction
}

// newHookSet builds the hooks of the policies that have bindings, ordered
// by policy name and then binding name (upstream's order is that of a Go
// map, i.e. unspecified; a fixed order makes the first denial stable).
// Bindings naming a missing policy are dropped, and so are policies whose
// paramKind.apiVersion does not parse, as upstream. Evaluators compiled for
// prev are reused for policies whose resourceVersion did not change.
func newHookSet(policies []policyDef, bindings []bindingDef, prev *hookSet) *hookSet {
	byPolicy := map[string][]bindingDef{}
	for _, b := range bindings {
		byPolicy[b.policyName] = append(byPolicy[b.policyName], b)
	}
	set := &hookSet{cache: map[string]*compiledPolicy{}}
	for _, p := range policies {
		bs := byPolicy[p.name]
		if len(bs) == 0 {
			continue
		}
		h := &hook{name: p.name, criteria: match.Policy(p.matchConstraints), paramKind: p.paramKind,
			failurePolicy: admissionregistrationv1.Fail}
		if p.failurePolicy != nil {
			h.failurePolicy = *p.failurePolicy
		}
		if p.paramKind != nil {
			gv, err := schema.ParseGroupVersion(p.paramKind.APIVersion)
			if err != nil {
				continue
			}
			h.paramGVK = gv.WithKind(p.paramKind.Kind)
		}
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].name < bs[j].name })
		for _, b := range bs {
			h.bindings = append(h.bindings, &binding{name: b.name, criteria: match.Binding(b.matchResources),
				paramRef: b.paramRef, actions: b.actions})
		}
		h.compiled = reuse(prev, p)
		set.cache[p.name] = h.compiled
		set.hooks = append(set.hooks, h)
	}
	sort.SliceStable(set.hooks, func(i, j int) bool { return set.hooks[i].name < set.hooks[j].name })
	criteria := make([]*match.Criteria, len(set.hooks))
	for i, h := range set.hooks {
		criteria[i] = h.criteria
	}
	set.index = match.NewIndex(criteria)
	return set
}

func reuse(prev *hookSet, p policyDef) *compiledPolicy {
	if prev != nil {
		if c := prev.cache[p.name]; c != nil && c.rv == p.rv && p.rv != "" {
			return c
		}
	}
	return &compiledPolicy{rv: p.rv, compile: p.compile}
}

// candidates returns the hooks whose policy could match the request, in
// order.
func (s *hookSet) candidates(mr *match.Request, buf []int32) []int32 {
	if len(s.hooks) == 0 {
		return nil
	}
	return s.index.Candidates(mr, buf)
}

// empty reports whether no set has a hook.
func empty(sets []*hookSet) bool {
	for _, s := range sets {
		if len(s.hooks) > 0 {
			return false
		}
	}
	return true
}
