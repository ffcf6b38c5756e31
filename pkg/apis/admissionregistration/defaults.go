package admissionregistration

import (
	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Defaults of admissionregistration.k8s.io/v1, as upstream's
// pkg/apis/admissionregistration/v1/defaults.go sets them.

// Default fills the unset fields of a webhook configuration, an admission
// policy or a binding as the API does on decoding; other objects are left
// alone.
func Default(obj runtime.Object) {
	switch o := obj.(type) {
	case *v1.MutatingWebhookConfiguration:
		defaultMutatingWebhookConfiguration(o)
	case *v1.ValidatingWebhookConfiguration:
		defaultValidatingWebhookConfiguration(o)
	case *v1.ValidatingAdmissionPolicy:
		defaultPolicy(&o.Spec.FailurePolicy, o.Spec.MatchConstraints)
	case *v1.MutatingAdmissionPolicy:
		defaultPolicy(&o.Spec.FailurePolicy, o.Spec.MatchConstraints)
	case *v1.ValidatingAdmissionPolicyBinding:
		DefaultMatchResources(o.Spec.MatchResources)
	case *v1.MutatingAdmissionPolicyBinding:
		DefaultMatchResources(o.Spec.MatchResources)
	}
}

func defaultMutatingWebhookConfiguration(c *v1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultHookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
		if w.ReinvocationPolicy == nil {
			w.ReinvocationPolicy = ptr.To(v1.NeverReinvocationPolicy)
		}
	}
}

func defaultValidatingWebhookConfiguration(c *v1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultHookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
	}
}

func defaultHookCommon(fp **v1.FailurePolicyType, mp **v1.MatchPolicyType, ns, objSel **metav1.LabelSelector, timeout **int32, rules []v1.RuleWithOperations, cc *v1.WebhookClientConfig) {
	if *fp == nil {
		*fp = ptr.To(v1.Fail)
	}
	if *mp == nil {
		*mp = ptr.To(v1.Equivalent)
	}
	if *ns == nil {
		*ns = &metav1.LabelSelector{}
	}
	if *objSel == nil {
		*objSel = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = ptr.To[int32](10)
	}
	defaultRules(rules)
	if cc.Service != nil && cc.Service.Port == nil {
		cc.Service.Port = ptr.To[int32](443)
	}
}

func defaultRules(rules []v1.RuleWithOperations) {
	for i := range rules {
		if rules[i].Scope == nil {
			rules[i].Scope = ptr.To(v1.AllScopes)
		}
	}
}

func defaultNamedRules(rules []v1.NamedRuleWithOperations) {
	for i := range rules {
		if rules[i].Scope == nil {
			rules[i].Scope = ptr.To(v1.AllScopes)
		}
	}
}

// DefaultMatchResources defaults the matchConstraints of a policy or the
// matchResources of a binding; nil is left nil.
func DefaultMatchResources(m *v1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = ptr.To(v1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	defaultNamedRules(m.ResourceRules)
	defaultNamedRules(m.ExcludeResourceRules)
}

// defaultPolicy defaults the spec fields validating and mutating policies
// share.
func defaultPolicy(fp **v1.FailurePolicyType, m *v1.MatchResources) {
	if *fp == nil {
		*fp = ptr.To(v1.Fail)
	}
	DefaultMatchResources(m)
}
