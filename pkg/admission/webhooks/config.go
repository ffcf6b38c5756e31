package webhooks

import (
	"fmt"
	"sort"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

// Hook is one webhook of a configuration, in the form both dispatchers use.
type Hook struct {
	// UID identifies the hook across reinvocation: <config>/<name>/<position>.
	UID    string
	Config string
	Name   string
	// Index is the position in the ordered list of all hooks of its kind.
	Index int

	ClientConfig            admissionregistrationv1.WebhookClientConfig
	Rules                   []admissionregistrationv1.RuleWithOperations
	FailurePolicy           *admissionregistrationv1.FailurePolicyType
	MatchPolicy             *admissionregistrationv1.MatchPolicyType
	NamespaceSelector       *metav1.LabelSelector
	ObjectSelector          *metav1.LabelSelector
	SideEffects             *admissionregistrationv1.SideEffectClass
	TimeoutSeconds          *int32
	AdmissionReviewVersions []string
	MatchConditions         []admissionregistrationv1.MatchCondition
	// ReinvocationPolicy is set for mutating hooks only.
	ReinvocationPolicy *admissionregistrationv1.ReinvocationPolicyType

	compileOnce sync.Once
	compiled    *compiledHook
	compileErr  error

	conditionsOnce sync.Once
	conditions     *admcel.MatchConditions
}

// failOpen reports whether call failures are ignored.
func (h *Hook) failOpen() bool {
	return h.FailurePolicy != nil && *h.FailurePolicy == admissionregistrationv1.Ignore
}

// reinvokeIfNeeded reports whether the hook asks to be called again when a
// later mutation changes the object.
func (h *Hook) reinvokeIfNeeded() bool {
	return h.ReinvocationPolicy != nil && *h.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy
}

// Snapshot is an immutable, ordered set of hooks: what a request reads
// without locks. Hooks are ordered by configuration name, then position.
type Snapshot struct {
	Mutating   []*Hook
	Validating []*Hook

	mutating, validating hookList
}

// NewSnapshot orders and converts configurations into a snapshot.
func NewSnapshot(mutating []*admissionregistrationv1.MutatingWebhookConfiguration, validating []*admissionregistrationv1.ValidatingWebhookConfiguration) *Snapshot {
	s := &Snapshot{}
	sort.SliceStable(mutating, func(i, j int) bool { return mutating[i].Name < mutating[j].Name })
	sort.SliceStable(validating, func(i, j int) bool { return validating[i].Name < validating[j].Name })
	for _, c := range mutating {
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			s.Mutating = append(s.Mutating, &Hook{
				UID: hookUID(c.Name, w.Name, i), Config: c.Name, Name: w.Name, Index: len(s.Mutating),
				ClientConfig: w.ClientConfig, Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
				NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector, SideEffects: w.SideEffects,
				TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions,
				MatchConditions: w.MatchConditions, ReinvocationPolicy: w.ReinvocationPolicy,
			})
		}
	}
	for _, c := range validating {
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			s.Validating = append(s.Validating, &Hook{
				UID: hookUID(c.Name, w.Name, i), Config: c.Name, Name: w.Name, Index: len(s.Validating),
				ClientConfig: w.ClientConfig, Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
				NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector, SideEffects: w.SideEffects,
				TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions,
				MatchConditions: w.MatchConditions,
			})
		}
	}
	s.mutating = newHookList(s.Mutating)
	s.validating = newHookList(s.Validating)
	return s
}

func hookUID(config, name string, i int) string {
	return fmt.Sprintf("%s/%s/%d", config, name, i)
}

// Source gives the current snapshot. Implementations publish a new snapshot
// whenever configurations change; Current never blocks.
type Source interface {
	Current() *Snapshot
}

// StaticSource is a Source over a fixed snapshot (tests, embedding).
type StaticSource struct{ Snapshot *Snapshot }

// Current returns the fixed snapshot.
func (s StaticSource) Current() *Snapshot { return s.Snapshot }
