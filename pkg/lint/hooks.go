package lint

import (
	"fmt"

	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission/match"
)

// hook is one webhook of a configuration, mutating or validating, with
// its defaulted fields and compiled scope.
type hook struct {
	config         Object
	index          int
	name           string
	mutating       bool
	rules          []v1.RuleWithOperations
	failurePolicy  v1.FailurePolicyType
	namespaceSel   *metav1.LabelSelector
	objectSel      *metav1.LabelSelector
	equivalent     bool
	timeout        int32
	sideEffects    *v1.SideEffectClass
	reviewVersions []string
	client         v1.WebhookClientConfig
	reinvoked      bool
	criteria       *match.Criteria
	selectors      parsedSelectors
}

// field is the path of a field of the hook in its configuration.
func (h *hook) field(name string) string { return fmt.Sprintf("webhooks[%d].%s", h.index, name) }

func (h *hook) finding(id string, sev Severity, field, message string) Finding {
	return newFinding(id, sev, h.config, h.name, field, message)
}

// failsClosed reports whether a failure of the webhook rejects the request.
func (h *hook) failsClosed() bool { return h.failurePolicy != v1.Ignore }

// riskSeverity is Error when the hook fails closed, else Warning.
func (h *hook) riskSeverity() Severity {
	if h.failsClosed() {
		return Error
	}
	return Warning
}

// hooks lists the webhooks of every configuration, mutating first.
func (s *Set) hooks() []hook {
	var out []hook
	for _, c := range s.MutatingWebhooks {
		obj := s.originOf(c)
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			h := newHook(obj, i, w.Name, true, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
				w.TimeoutSeconds, w.SideEffects, w.AdmissionReviewVersions, w.ClientConfig)
			h.reinvoked = w.ReinvocationPolicy != nil && *w.ReinvocationPolicy == v1.IfNeededReinvocationPolicy
			out = append(out, h)
		}
	}
	for _, c := range s.ValidatingWebhooks {
		obj := s.originOf(c)
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			out = append(out, newHook(obj, i, w.Name, false, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
				w.TimeoutSeconds, w.SideEffects, w.AdmissionReviewVersions, w.ClientConfig))
		}
	}
	return out
}

func newHook(obj Object, i int, name string, mutating bool, rules []v1.RuleWithOperations, fp *v1.FailurePolicyType,
	mp *v1.MatchPolicyType, ns, os *metav1.LabelSelector, timeout *int32, se *v1.SideEffectClass, versions []string,
	cc v1.WebhookClientConfig) hook {
	h := hook{config: obj, index: i, name: name, mutating: mutating, rules: rules, failurePolicy: v1.Fail,
		namespaceSel: ns, objectSel: os, equivalent: mp == nil || *mp == v1.Equivalent, timeout: 10,
		sideEffects: se, reviewVersions: versions, client: cc}
	if fp != nil {
		h.failurePolicy = *fp
	}
	if timeout != nil {
		h.timeout = *timeout
	}
	h.criteria = match.Webhook(rules, mp, ns, os)
	h.selectors = parseSelectors(ns, os)
	return h
}
