package podsecurity

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	psadmission "k8s.io/pod-security-admission/admission"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/boundedcache"
)

// enforcePolicyAnnotation is the audit annotation the library adds to every
// pod it evaluates.
const enforcePolicyAnnotation = psapi.AuditAnnotationPrefix + psapi.EnforcedPolicyAnnotationKey

var privilegedLatest = psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()}.String()

// fastPath admits, without the library, the pod creates the library would
// admit with nothing to say but the enforced policy: no exemption applies,
// the namespace's labels parse, and the pod passes the enforce, audit and
// warn levels. It then records what the library would (the evaluation
// metric, the enforce-policy audit annotation). Anything else it leaves to
// the library (ok false), which alone words refusals and warnings.
type fastPath struct {
	cfg        *psadmission.Admission
	namespaces psadmission.NamespaceGetter
	// policies keeps the parsed policy of each namespace name, valid
	// while the namespace lookup returns the same object (objects in the
	// lookup are replaced, never changed, when the namespace is written).
	policies boundedcache.Cache[string, *nsPolicy]
}

// admit reports whether it admitted a's pod.
func (f *fastPath) admit(ctx context.Context, a *admission.Attributes) bool {
	if a.Operation != admission.Create || a.Subresource != "" || a.Resource != podsGVR {
		return false
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return false
	}
	ex := &f.cfg.Configuration.Exemptions
	if (a.Namespace != "" && slices.Contains(ex.Namespaces, a.Namespace)) ||
		(a.UserInfo.Username != "" && slices.Contains(ex.Usernames, a.UserInfo.Username)) {
		return false
	}
	ns, err := f.namespaces.GetNamespace(ctx, a.Namespace)
	if err != nil {
		return false
	}
	pol := f.policyOf(ns)
	if !pol.parsed {
		return false
	}
	if pol.Policy.FullyPrivileged() {
		// The library's answer names "privileged:latest" whatever the
		// version labels say.
		f.cfg.Metrics.RecordEvaluation(psmetrics.DecisionAllow, pol.Enforce, psmetrics.ModeEnforce, attributes{a})
		if a.Record != nil {
			_ = a.Record.AddAnnotation(enforcePolicyAnnotation, privilegedLatest)
		}
		return true
	}
	if rc := pod.Spec.RuntimeClassName; rc != nil && *rc != "" && slices.Contains(ex.RuntimeClasses, *rc) {
		return false
	}
	for _, lv := range [...]psapi.LevelVersion{pol.Enforce, pol.Audit, pol.Warn} {
		if !passes(lv, &pod.ObjectMeta, &pod.Spec) {
			return false
		}
	}
	f.cfg.Metrics.RecordEvaluation(psmetrics.DecisionAllow, pol.Enforce, psmetrics.ModeEnforce, attributes{a})
	if a.Record != nil {
		_ = a.Record.AddAnnotation(enforcePolicyAnnotation, pol.enforce)
	}
	return true
}

// nsPolicy is the policy a namespace's labels ask for, parsed once per
// namespace object.
type nsPolicy struct {
	psapi.Policy
	ns      *corev1.Namespace // the object it was parsed from
	parsed  bool              // the labels parsed without error
	enforce string            // Policy.Enforce.String()
}

// maxCachedPolicies is how many namespaces' policies are kept.
const maxCachedPolicies = 4096

// policyOf returns the policy ns's labels ask for, parsed once per
// namespace object.
func (f *fastPath) policyOf(ns *corev1.Namespace) *nsPolicy {
	if p, ok := f.policies.Load(ns.Name); ok && p.ns == ns {
		return p
	}
	pol, errs := f.cfg.PolicyToEvaluate(ns.Labels)
	p := &nsPolicy{Policy: pol, ns: ns, parsed: len(errs) == 0, enforce: pol.Enforce.String()}
	f.policies.Store(ns.Name, p)
	return p
}
