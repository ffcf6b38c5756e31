package webhooks

import (
	"fmt"
	"sort"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	admcel "github.com/admitd/admitd/pkg/admission/cel"
)

// hook is one webhook of a configuration, in the form both dispatchers use.
type hook struct {
	// UID identifies the hook across reinvocation: <config>/<name>/<position>.
	UID    string
	Config string
	Name   string
	// Index is the position in the ordered list of all hooks of its kind.
	Index int
	// Static hooks come from manifest files, not from the API.
	Static bool

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

	clientKeyOnce sync.Once
	clientKey     string
}

// clientCacheKey is the key of the hook's client configuration in the
// client cache, computed on first use (a hook never changes).
func (h *hook) clientCacheKey() string {
	h.clientKeyOnce.Do(func() { h.clientKey = cacheKey(h.ClientConfig) })
	return h.clientKey
}

// failOpen reports whether call failures are ignored.
func (h *hook) failOpen() bool {
	return h.FailurePolicy != nil && *h.FailurePolicy == admissionregistrationv1.Ignore
}

// reinvokeIfNeeded reports whether the hook asks to be called again when a
// later mutation changes the object.
func (h *hook) reinvokeIfNeeded() bool {
	return h.ReinvocationPolicy != nil && *h.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy
}

// Snapshot is an immutable, ordered set of hooks: what a request reads
// without locks. Hooks are ordered by configuration name, then position.
type Snapshot struct {
	mutatingHooks   []*hook
	validatingHooks []*hook

	mutating, validating hookList
	// the API configurations, sorted, for combining with static ones
	mutatingConfigs   []*admissionregistrationv1.MutatingWebhookConfiguration
	validatingConfigs []*admissionregistrationv1.ValidatingWebhookConfiguration
}

// NewSnapshot orders and converts configurations into a snapshot.
func NewSnapshot(mutating []*admissionregistrationv1.MutatingWebhookConfiguration, validating []*admissionregistrationv1.ValidatingWebhookConfiguration) *Snapshot {
	return combineSnapshots(nil, mutating, nil, validating)
}

// combineSnapshots builds the effective hook lists: the configurations of
// static manifests first, then those of the API, each sorted by name.
// Static hooks get "manifest/"-prefixed UIDs.
func combineSnapshots(staticMutating, mutating []*admissionregistrationv1.MutatingWebhookConfiguration,
	staticValidating, validating []*admissionregistrationv1.ValidatingWebhookConfiguration) *Snapshot {
	s := &Snapshot{mutatingConfigs: sortedByName(mutating), validatingConfigs: sortedByName(validating)}
	for _, static := range []bool{true, false} {
		ms, vs := s.mutatingConfigs, s.validatingConfigs
		if static {
			ms, vs = sortedByName(staticMutating), sortedByName(staticValidating)
		}
		for _, c := range ms {
			names := mutatingNames(c.Webhooks)
			for i := range c.Webhooks {
				w := &c.Webhooks[i]
				s.mutatingHooks = append(s.mutatingHooks, &hook{
					UID: hookUID(static, c.Name, names[:i], w.Name), Config: c.Name, Name: w.Name, Index: len(s.mutatingHooks), Static: static,
					ClientConfig: w.ClientConfig, Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
					NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector, SideEffects: w.SideEffects,
					TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions,
					MatchConditions: w.MatchConditions, ReinvocationPolicy: w.ReinvocationPolicy,
				})
			}
		}
		for _, c := range vs {
			names := validatingNames(c.Webhooks)
			for i := range c.Webhooks {
				w := &c.Webhooks[i]
				s.validatingHooks = append(s.validatingHooks, &hook{
					UID: hookUID(static, c.Name, names[:i], w.Name), Config: c.Name, Name: w.Name, Index: len(s.validatingHooks), Static: static,
					ClientConfig: w.ClientConfig, Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
					NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector, SideEffects: w.SideEffects,
					TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions,
					MatchConditions: w.MatchConditions,
				})
			}
		}
	}
	s.mutating = newHookList(s.mutatingHooks)
	s.validating = newHookList(s.validatingHooks)
	return s
}

func sortedByName[T interface{ GetName() string }](list []T) []T {
	out := append([]T(nil), list...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// hookUID is "<config>/<webhook>/<n>", n counting earlier webhooks of the
// same name in the configuration; static hooks are prefixed "manifest/".
func hookUID(static bool, config string, earlier []string, name string) string {
	n := 0
	for _, e := range earlier {
		if e == name {
			n++
		}
	}
	uid := fmt.Sprintf("%s/%s/%d", config, name, n)
	if static {
		uid = "manifest/" + uid
	}
	return uid
}

func mutatingNames(ws []admissionregistrationv1.MutatingWebhook) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Name
	}
	return out
}

func validatingNames(ws []admissionregistrationv1.ValidatingWebhook) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Name
	}
	return out
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
