package admissionregistration

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// API validation of MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration (upstream
// pkg/apis/admissionregistration/validation). Updates are lenient where the
// old object already broke a rule that was tightened later.

// acceptedReviewVersions are the AdmissionReview versions the previous API
// server version understands.
var acceptedReviewVersions = []string{"v1", "v1beta1"}

// hook is the part of a webhook the two configuration kinds share;
// reinvocationPolicy is only set for mutating webhooks.
type hook struct {
	name                              string
	clientConfig                      v1.WebhookClientConfig
	rules                             []v1.RuleWithOperations
	failurePolicy                     *v1.FailurePolicyType
	matchPolicy                       *v1.MatchPolicyType
	namespaceSelector, objectSelector *metav1.LabelSelector
	sideEffects                       *v1.SideEffectClass
	timeoutSeconds                    *int32
	reviewVersions                    []string
	matchConditions                   []v1.MatchCondition
	mutating                          bool
	reinvocationPolicy                *v1.ReinvocationPolicyType
}

func validatingHooks(c *v1.ValidatingWebhookConfiguration) []hook {
	out := make([]hook, len(c.Webhooks))
	for i, w := range c.Webhooks {
		out[i] = hook{name: w.Name, clientConfig: w.ClientConfig, rules: w.Rules, failurePolicy: w.FailurePolicy,
			matchPolicy: w.MatchPolicy, namespaceSelector: w.NamespaceSelector, objectSelector: w.ObjectSelector,
			sideEffects: w.SideEffects, timeoutSeconds: w.TimeoutSeconds, reviewVersions: w.AdmissionReviewVersions,
			matchConditions: w.MatchConditions}
	}
	return out
}

func mutatingHooks(c *v1.MutatingWebhookConfiguration) []hook {
	out := make([]hook, len(c.Webhooks))
	for i, w := range c.Webhooks {
		out[i] = hook{name: w.Name, clientConfig: w.ClientConfig, rules: w.Rules, failurePolicy: w.FailurePolicy,
			matchPolicy: w.MatchPolicy, namespaceSelector: w.NamespaceSelector, objectSelector: w.ObjectSelector,
			sideEffects: w.SideEffects, timeoutSeconds: w.TimeoutSeconds, reviewVersions: w.AdmissionReviewVersions,
			matchConditions: w.MatchConditions, mutating: true, reinvocationPolicy: w.ReinvocationPolicy}
	}
	return out
}

// hookOptions are the rules that differ between create and update.
type hookOptions struct {
	skipMatchConditions  bool
	sideEffects          []string // the classes allowed
	requireReviewVersion bool
	uniqueNames          bool
	lenientSelectors     bool
	oldExpressions       exprSet
}

// createHookOptions are the strict rules of a new configuration.
func createHookOptions() hookOptions {
	return hookOptions{sideEffects: noSideEffectValues, requireReviewVersion: true, uniqueNames: true}
}

// updateHookOptions keeps each tightened rule off while the old object
// already breaks it, and keeps unchanged matchConditions as they are.
func updateHookOptions(hooks, old []hook) hookOptions {
	o := hookOptions{
		skipMatchConditions:  sameMatchConditions(hooks, old),
		sideEffects:          noSideEffectValues,
		requireReviewVersion: true,
		uniqueNames:          true,
		oldExpressions:       exprSet{},
	}
	names := map[string]bool{}
	for _, h := range old {
		if h.sideEffects == nil || !supported(noSideEffectValues, *h.sideEffects) {
			o.sideEffects = sideEffectValues
		}
		if len(h.reviewVersions) > 0 && !slices.ContainsFunc(h.reviewVersions, isAcceptedReviewVersion) {
			o.requireReviewVersion = false
		}
		if names[h.name] {
			o.uniqueNames = false
		}
		names[h.name] = true
		if hasStrictlyInvalidSelector(h) {
			o.lenientSelectors = true
		}
		for _, mc := range h.matchConditions {
			o.oldExpressions[mc.Expression] = true
		}
	}
	return o
}

func sameMatchConditions(hooks, old []hook) bool {
	if len(hooks) != len(old) {
		return false
	}
	for i := range old {
		if !reflect.DeepEqual(hooks[i].matchConditions, old[i].matchConditions) {
			return false
		}
	}
	return true
}

func hasStrictlyInvalidSelector(h hook) bool {
	for _, s := range []*metav1.LabelSelector{h.namespaceSelector, h.objectSelector} {
		if s != nil && len(validateLabelSelector(s, false, nil)) > 0 {
			return true
		}
	}
	return false
}

func isAcceptedReviewVersion(v string) bool {
	return slices.Contains(acceptedReviewVersions, v)
}

// validateHooks checks the webhooks of a configuration.
func validateHooks(hooks []hook, o hookOptions) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i := range hooks {
		p := field.NewPath("webhooks").Index(i)
		errs = append(errs, validateHook(&hooks[i], o, p)...)
		errs = append(errs, validateReviewVersions(hooks[i].reviewVersions, o.requireReviewVersion, p.Child("admissionReviewVersions"))...)
		if name := hooks[i].name; o.uniqueNames && name != "" {
			if names[name] {
				errs = append(errs, field.Duplicate(p.Child("name"), name))
			}
			names[name] = true
		}
	}
	return errs
}

func validateHook(h *hook, o hookOptions, fldPath *field.Path) field.ErrorList {
	errs := utilvalidation.IsFullyQualifiedName(fldPath.Child("name"), h.name)
	for i := range h.rules {
		errs = append(errs, validateRuleWithOperations(&h.rules[i], fldPath.Child("rules").Index(i))...)
	}
	if h.failurePolicy != nil && !supported(failurePolicyValues, *h.failurePolicy) {
		errs = append(errs, field.NotSupported(fldPath.Child("failurePolicy"), *h.failurePolicy, failurePolicyValues))
	}
	if h.matchPolicy != nil && !supported(matchPolicyValues, *h.matchPolicy) {
		errs = append(errs, field.NotSupported(fldPath.Child("matchPolicy"), *h.matchPolicy, matchPolicyValues))
	}
	switch {
	case h.sideEffects == nil:
		errs = append(errs, field.Required(fldPath.Child("sideEffects"), "must specify one of "+strings.Join(o.sideEffects, ", ")))
	case !supported(o.sideEffects, *h.sideEffects):
		errs = append(errs, field.NotSupported(fldPath.Child("sideEffects"), *h.sideEffects, o.sideEffects))
	}
	if t := h.timeoutSeconds; t != nil && (*t > 30 || *t < 1) {
		errs = append(errs, field.Invalid(fldPath.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	if h.namespaceSelector != nil {
		errs = append(errs, validateLabelSelector(h.namespaceSelector, o.lenientSelectors, fldPath.Child("namespaceSelector"))...)
	}
	if h.objectSelector != nil {
		errs = append(errs, validateLabelSelector(h.objectSelector, o.lenientSelectors, fldPath.Child("objectSelector"))...)
	}
	if h.mutating && h.reinvocationPolicy != nil && !supported(reinvocationPolicyValues, *h.reinvocationPolicy) {
		errs = append(errs, field.NotSupported(fldPath.Child("reinvocationPolicy"), *h.reinvocationPolicy, reinvocationPolicyValues))
	}
	errs = append(errs, validateClientConfig(&h.clientConfig, fldPath.Child("clientConfig"))...)
	if !o.skipMatchConditions {
		mco := matchConditionsOptions{old: o.oldExpressions}
		errs = append(errs, validateMatchConditions(h.matchConditions, mco, fldPath.Child("matchConditions"))...)
	}
	return errs
}

// validateClientConfig checks that exactly one of url and service is set,
// and that one. caBundle is not checked, as upstream does not.
func validateClientConfig(cc *v1.WebhookClientConfig, fldPath *field.Path) field.ErrorList {
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		return field.ErrorList{field.Required(fldPath, "exactly one of url or service is required")}
	case cc.URL != nil:
		return validateWebhookURL(fldPath.Child("url"), *cc.URL)
	}
	s := cc.Service
	return validateWebhookService(fldPath.Child("service"), s.Name, s.Namespace, s.Path, ptr.Deref(s.Port, 0))
}

func validateReviewVersions(versions []string, requireAccepted bool, fldPath *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(fldPath, "must specify one of "+strings.Join(acceptedReviewVersions, ", "))}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	accepted := false
	for i, v := range versions {
		if seen[v] {
			errs = append(errs, field.Invalid(fldPath.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(fldPath.Index(i), v, msg))
		}
		accepted = accepted || isAcceptedReviewVersion(v)
	}
	if requireAccepted && !accepted {
		errs = append(errs, field.Invalid(fldPath, versions, fmt.Sprintf("must include at least one of %v", strings.Join(acceptedReviewVersions, ", "))))
	}
	return errs
}

// Per-kind entry points of Validate and ValidateUpdate.

func validateValidatingWebhookConfiguration(obj runtime.Object) field.ErrorList {
	c := obj.(*v1.ValidatingWebhookConfiguration)
	errs := validateReservedName(c.Name)
	return append(errs, validateHooks(validatingHooks(c), createHookOptions())...)
}

func validateValidatingWebhookConfigurationUpdate(obj, old runtime.Object) field.ErrorList {
	hooks, oldHooks := validatingHooks(obj.(*v1.ValidatingWebhookConfiguration)), validatingHooks(old.(*v1.ValidatingWebhookConfiguration))
	return validateHooks(hooks, updateHookOptions(hooks, oldHooks))
}

func validateMutatingWebhookConfiguration(obj runtime.Object) field.ErrorList {
	c := obj.(*v1.MutatingWebhookConfiguration)
	errs := validateReservedName(c.Name)
	return append(errs, validateHooks(mutatingHooks(c), createHookOptions())...)
}

func validateMutatingWebhookConfigurationUpdate(obj, old runtime.Object) field.ErrorList {
	hooks, oldHooks := mutatingHooks(obj.(*v1.MutatingWebhookConfiguration)), mutatingHooks(old.(*v1.MutatingWebhookConfiguration))
	return validateHooks(hooks, updateHookOptions(hooks, oldHooks))
}
