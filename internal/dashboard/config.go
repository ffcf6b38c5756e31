package dashboard

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/lint"
)

// ConfigView is the admission configuration as the dashboard shows it:
// each webhook and policy with its scope and its lint findings. It holds
// no caBundle and no params.
type ConfigView struct {
	ReadAt                time.Time           `json:"readAt"`
	WebhookConfigurations []WebhookConfigView `json:"webhookConfigurations"`
	Policies              []PolicyView        `json:"policies"`
	// BindingsWithoutPolicy bind policies that do not exist.
	BindingsWithoutPolicy []BindingView `json:"bindingsWithoutPolicy"`
	// Findings are all lint findings (pkg/lint, without probing the
	// webhooks); each is also listed on its object below.
	Findings []lint.Finding `json:"findings"`
	Summary  lint.Summary   `json:"summary"`
}

// WebhookConfigView is one mutating or validating webhook configuration.
type WebhookConfigView struct {
	Kind     string        `json:"kind"`
	Name     string        `json:"name"`
	Webhooks []WebhookView `json:"webhooks"`
	// Findings are those about the configuration as a whole.
	Findings []lint.Finding `json:"findings"`
}

// WebhookView is one webhook and its scope.
type WebhookView struct {
	Name string `json:"name"`
	// Client is the Service (namespace/name:port/path) or URL called;
	// CABundle whether the webhook trusts its own CA bundle.
	Client             string          `json:"client"`
	CABundle           bool            `json:"caBundle"`
	Rules              []RuleView      `json:"rules"`
	NamespaceSelector  string          `json:"namespaceSelector"`
	ObjectSelector     string          `json:"objectSelector"`
	MatchConditions    []ConditionView `json:"matchConditions,omitempty"`
	MatchPolicy        string          `json:"matchPolicy,omitempty"`
	FailurePolicy      string          `json:"failurePolicy"`
	TimeoutSeconds     int32           `json:"timeoutSeconds"`
	SideEffects        string          `json:"sideEffects,omitempty"`
	ReinvocationPolicy string          `json:"reinvocationPolicy,omitempty"`
	ReviewVersions     []string        `json:"admissionReviewVersions"`
	Findings           []lint.Finding  `json:"findings"`
}

// RuleView is one rule of a webhook or policy.
type RuleView struct {
	Operations    []string `json:"operations"`
	APIGroups     []string `json:"apiGroups"`
	APIVersions   []string `json:"apiVersions"`
	Resources     []string `json:"resources"`
	ResourceNames []string `json:"resourceNames,omitempty"`
	Scope         string   `json:"scope,omitempty"`
}

// ConditionView is a matchCondition.
type ConditionView struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// ScopeView is a policy's matchConstraints or a binding's matchResources.
type ScopeView struct {
	Rules             []RuleView `json:"rules"`
	ExcludeRules      []RuleView `json:"excludeRules,omitempty"`
	NamespaceSelector string     `json:"namespaceSelector"`
	ObjectSelector    string     `json:"objectSelector"`
	MatchPolicy       string     `json:"matchPolicy,omitempty"`
}

// PolicyView is one ValidatingAdmissionPolicy or MutatingAdmissionPolicy
// with its bindings.
type PolicyView struct {
	Kind               string          `json:"kind"`
	Name               string          `json:"name"`
	FailurePolicy      string          `json:"failurePolicy"`
	ParamKind          string          `json:"paramKind,omitempty"`
	Match              *ScopeView      `json:"matchConstraints,omitempty"`
	MatchConditions    []ConditionView `json:"matchConditions,omitempty"`
	ReinvocationPolicy string          `json:"reinvocationPolicy,omitempty"`
	// Expressions are the validations' or mutations' CEL expressions.
	Expressions []string       `json:"expressions"`
	Bindings    []BindingView  `json:"bindings"`
	Findings    []lint.Finding `json:"findings"`
}

// BindingView is one policy binding.
type BindingView struct {
	Kind              string         `json:"kind"`
	Name              string         `json:"name"`
	Policy            string         `json:"policy"`
	ValidationActions []string       `json:"validationActions,omitempty"`
	ParamRef          string         `json:"paramRef,omitempty"`
	Match             *ScopeView     `json:"matchResources,omitempty"`
	Findings          []lint.Finding `json:"findings"`
}

// findingIndex files findings by object kind, name and webhook.
type findingIndex map[[3]string][]lint.Finding

func indexFindings(fs []lint.Finding) findingIndex {
	x := findingIndex{}
	for _, f := range fs {
		k := [3]string{f.Object.Kind, f.Object.Name, f.Webhook}
		x[k] = append(x[k], f)
	}
	return x
}

func (x findingIndex) of(kind, name, webhook string) []lint.Finding {
	return append([]lint.Finding{}, x[[3]string{kind, name, webhook}]...)
}

// viewOf lints set and describes it.
func viewOf(ctx context.Context, set *lint.Set, schemas lint.Schemas, now time.Time) *ConfigView {
	fs := lint.Run(ctx, set, lint.Options{Now: func() time.Time { return now }, Schemas: schemas})
	for i := range fs {
		fs[i].Object.Source = "" // the server itself
	}
	x := indexFindings(fs)
	v := &ConfigView{ReadAt: now, Findings: append([]lint.Finding{}, fs...), Summary: lint.Summarize(fs),
		WebhookConfigurations: []WebhookConfigView{}, Policies: []PolicyView{}, BindingsWithoutPolicy: []BindingView{}}
	for _, c := range set.MutatingWebhooks {
		wc := WebhookConfigView{Kind: "MutatingWebhookConfiguration", Name: c.Name, Findings: x.of("MutatingWebhookConfiguration", c.Name, "")}
		for i := range c.Webhooks {
			h := &c.Webhooks[i]
			w := webhookView(h.Name, h.ClientConfig, h.Rules, h.NamespaceSelector, h.ObjectSelector, h.MatchConditions,
				h.MatchPolicy, h.FailurePolicy, h.TimeoutSeconds, h.SideEffects, h.AdmissionReviewVersions)
			w.ReinvocationPolicy = deref(h.ReinvocationPolicy)
			w.Findings = x.of(wc.Kind, c.Name, h.Name)
			wc.Webhooks = append(wc.Webhooks, w)
		}
		v.WebhookConfigurations = append(v.WebhookConfigurations, wc)
	}
	for _, c := range set.ValidatingWebhooks {
		wc := WebhookConfigView{Kind: "ValidatingWebhookConfiguration", Name: c.Name, Findings: x.of("ValidatingWebhookConfiguration", c.Name, "")}
		for i := range c.Webhooks {
			h := &c.Webhooks[i]
			w := webhookView(h.Name, h.ClientConfig, h.Rules, h.NamespaceSelector, h.ObjectSelector, h.MatchConditions,
				h.MatchPolicy, h.FailurePolicy, h.TimeoutSeconds, h.SideEffects, h.AdmissionReviewVersions)
			w.Findings = x.of(wc.Kind, c.Name, h.Name)
			wc.Webhooks = append(wc.Webhooks, w)
		}
		v.WebhookConfigurations = append(v.WebhookConfigurations, wc)
	}
	v.addPolicies(set, x)
	return v
}

func webhookView(name string, cc v1.WebhookClientConfig, rules []v1.RuleWithOperations, ns, obj *metav1.LabelSelector,
	conds []v1.MatchCondition, mp *v1.MatchPolicyType, fp *v1.FailurePolicyType, timeout *int32, se *v1.SideEffectClass, versions []string) WebhookView {
	w := WebhookView{Name: name, Client: clientOf(cc), CABundle: len(cc.CABundle) > 0, NamespaceSelector: selectorString(ns),
		ObjectSelector: selectorString(obj), MatchConditions: conditionsOf(conds), MatchPolicy: deref(mp),
		FailurePolicy: deref(fp), SideEffects: deref(se), ReviewVersions: versions, Rules: []RuleView{}}
	if timeout != nil {
		w.TimeoutSeconds = *timeout
	}
	for _, r := range rules {
		w.Rules = append(w.Rules, ruleView(r.Operations, r.Rule, nil))
	}
	return w
}

func (v *ConfigView) addPolicies(set *lint.Set, x findingIndex) {
	bound := map[[2]string]bool{}
	for _, p := range set.ValidatingPolicies {
		pv := PolicyView{Kind: "ValidatingAdmissionPolicy", Name: p.Name, FailurePolicy: deref(p.Spec.FailurePolicy),
			ParamKind: paramKindOf(p.Spec.ParamKind), Match: scopeOf(p.Spec.MatchConstraints), MatchConditions: conditionsOf(p.Spec.MatchConditions),
			Expressions: []string{}, Bindings: []BindingView{}, Findings: x.of("ValidatingAdmissionPolicy", p.Name, "")}
		for _, val := range p.Spec.Validations {
			pv.Expressions = append(pv.Expressions, val.Expression)
		}
		for _, b := range set.ValidatingBindings {
			if b.Spec.PolicyName == p.Name {
				pv.Bindings = append(pv.Bindings, validatingBinding(b, x))
				bound[[2]string{"V", b.Name}] = true
			}
		}
		v.Policies = append(v.Policies, pv)
	}
	for _, p := range set.MutatingPolicies {
		pv := PolicyView{Kind: "MutatingAdmissionPolicy", Name: p.Name, FailurePolicy: deref(p.Spec.FailurePolicy),
			ParamKind: paramKindOf(p.Spec.ParamKind), Match: scopeOf(p.Spec.MatchConstraints), MatchConditions: conditionsOf(p.Spec.MatchConditions),
			ReinvocationPolicy: string(p.Spec.ReinvocationPolicy), Expressions: []string{}, Bindings: []BindingView{},
			Findings: x.of("MutatingAdmissionPolicy", p.Name, "")}
		for _, m := range p.Spec.Mutations {
			pv.Expressions = append(pv.Expressions, mutationExpression(m))
		}
		for _, b := range set.MutatingBindings {
			if b.Spec.PolicyName == p.Name {
				pv.Bindings = append(pv.Bindings, mutatingBinding(b, x))
				bound[[2]string{"M", b.Name}] = true
			}
		}
		v.Policies = append(v.Policies, pv)
	}
	for _, b := range set.ValidatingBindings {
		if !bound[[2]string{"V", b.Name}] {
			v.BindingsWithoutPolicy = append(v.BindingsWithoutPolicy, validatingBinding(b, x))
		}
	}
	for _, b := range set.MutatingBindings {
		if !bound[[2]string{"M", b.Name}] {
			v.BindingsWithoutPolicy = append(v.BindingsWithoutPolicy, mutatingBinding(b, x))
		}
	}
}

func validatingBinding(b *v1.ValidatingAdmissionPolicyBinding, x findingIndex) BindingView {
	const kind = "ValidatingAdmissionPolicyBinding"
	bv := BindingView{Kind: kind, Name: b.Name, Policy: b.Spec.PolicyName, ParamRef: paramRefOf(b.Spec.ParamRef),
		Match: scopeOf(b.Spec.MatchResources), Findings: x.of(kind, b.Name, "")}
	for _, a := range b.Spec.ValidationActions {
		bv.ValidationActions = append(bv.ValidationActions, string(a))
	}
	return bv
}

func mutatingBinding(b *v1.MutatingAdmissionPolicyBinding, x findingIndex) BindingView {
	const kind = "MutatingAdmissionPolicyBinding"
	return BindingView{Kind: kind, Name: b.Name, Policy: b.Spec.PolicyName, ParamRef: paramRefOf(b.Spec.ParamRef),
		Match: scopeOf(b.Spec.MatchResources), Findings: x.of(kind, b.Name, "")}
}

func mutationExpression(m v1.Mutation) string {
	switch {
	case m.ApplyConfiguration != nil:
		return m.ApplyConfiguration.Expression
	case m.JSONPatch != nil:
		return m.JSONPatch.Expression
	}
	return ""
}

func scopeOf(m *v1.MatchResources) *ScopeView {
	if m == nil {
		return nil
	}
	s := &ScopeView{Rules: []RuleView{}, NamespaceSelector: selectorString(m.NamespaceSelector),
		ObjectSelector: selectorString(m.ObjectSelector), MatchPolicy: deref(m.MatchPolicy)}
	for _, r := range m.ResourceRules {
		s.Rules = append(s.Rules, ruleView(r.Operations, r.Rule, r.ResourceNames))
	}
	for _, r := range m.ExcludeResourceRules {
		s.ExcludeRules = append(s.ExcludeRules, ruleView(r.Operations, r.Rule, r.ResourceNames))
	}
	return s
}

func ruleView(ops []v1.OperationType, r v1.Rule, names []string) RuleView {
	v := RuleView{APIGroups: r.APIGroups, APIVersions: r.APIVersions, Resources: r.Resources, ResourceNames: names, Scope: deref(r.Scope)}
	for _, op := range ops {
		v.Operations = append(v.Operations, string(op))
	}
	return v
}

func conditionsOf(conds []v1.MatchCondition) []ConditionView {
	var out []ConditionView
	for _, c := range conds {
		out = append(out, ConditionView{Name: c.Name, Expression: c.Expression})
	}
	return out
}

// clientOf names what a webhook calls.
func clientOf(cc v1.WebhookClientConfig) string {
	if s := cc.Service; s != nil {
		port := int32(443)
		if s.Port != nil {
			port = *s.Port
		}
		return fmt.Sprintf("service %s/%s:%d%s", s.Namespace, s.Name, port, deref(s.Path))
	}
	return deref(cc.URL)
}

// selectorString is a label selector in kubectl's words, "" when it
// selects everything.
func selectorString(sel *metav1.LabelSelector) string {
	if sel == nil || len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return ""
	}
	return metav1.FormatLabelSelector(sel)
}

func paramKindOf(pk *v1.ParamKind) string {
	if pk == nil {
		return ""
	}
	return strings.TrimPrefix(pk.APIVersion+" "+pk.Kind, " ")
}

func paramRefOf(r *v1.ParamRef) string {
	if r == nil {
		return ""
	}
	var parts []string
	if r.Namespace != "" {
		parts = append(parts, "namespace "+r.Namespace)
	}
	if r.Name != "" {
		parts = append(parts, "name "+r.Name)
	}
	if r.Selector != nil {
		parts = append(parts, "selector "+metav1.FormatLabelSelector(r.Selector))
	}
	if r.ParameterNotFoundAction != nil {
		parts = append(parts, "when not found: "+string(*r.ParameterNotFoundAction))
	}
	return strings.Join(parts, ", ")
}

func deref[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}
