package registry

import (
	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Defaults of admissionregistration.k8s.io/v1 (upstream
// pkg/apis/admissionregistration/v1/defaults.go); the API validation is in
// validate_webhooks.go, validate_policies.go and
// validate_mutating_policies.go.

func defaultMutatingWebhookConfiguration(obj runtime.Object) {
	c := obj.(*v1.MutatingWebhookConfiguration)
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultHookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
		if w.ReinvocationPolicy == nil {
			w.ReinvocationPolicy = ptr.To(v1.NeverReinvocationPolicy)
		}
	}
}

func defaultValidatingWebhookConfiguration(obj runtime.Object) {
	c := obj.(*v1.ValidatingWebhookConfiguration)
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

func defaultMatchResources(m *v1.MatchResources) {
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

func defaultValidatingAdmissionPolicy(obj runtime.Object) {
	p := obj.(*v1.ValidatingAdmissionPolicy)
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = ptr.To(v1.Fail)
	}
	defaultMatchResources(p.Spec.MatchConstraints)
}

func defaultValidatingAdmissionPolicyBinding(obj runtime.Object) {
	b := obj.(*v1.ValidatingAdmissionPolicyBinding)
	defaultMatchResources(b.Spec.MatchResources)
}

func defaultMutatingAdmissionPolicy(obj runtime.Object) {
	p := obj.(*v1.MutatingAdmissionPolicy)
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = ptr.To(v1.Fail)
	}
	defaultMatchResources(p.Spec.MatchConstraints)
}

func defaultMutatingAdmissionPolicyBinding(obj runtime.Object) {
	b := obj.(*v1.MutatingAdmissionPolicyBinding)
	defaultMatchResources(b.Spec.MatchResources)
}
