package podsecurity

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	psadmission "k8s.io/pod-security-admission/admission"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"

	"github.com/admitd/admitd/pkg/admission"
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
	policies   policyCache
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
	pol := f.policies.of(ns, f.cfg)
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

// policyCache keeps the parsed policy of each namespace name, valid while
// the namespace lookup returns the same object (objects in the lookup are
// replaced, never changed, when the namespace is written). At most
// maxCachedPolicies names are kept; then it starts over.
type policyCache struct {
	m sync.Map // name → *nsPolicy
	n atomic.Int32
}

const maxCachedPolicies = 4096

func (c *policyCache) of(ns *corev1.Namespace, cfg *psadmission.Admission) *nsPolicy {
	if v, ok := c.m.Load(ns.Name); ok {
		if p := v.(*nsPolicy); p.ns == ns {
			return p
		}
	}
	pol, errs := cfg.PolicyToEvaluate(ns.Labels)
	p := &nsPolicy{Policy: pol, ns: ns, parsed: len(errs) == 0, enforce: pol.Enforce.String()}
	if c.n.Load() >= maxCachedPolicies {
		c.m.Clear()
		c.n.Store(0)
	}
	if _, loaded := c.m.Swap(ns.Name, p); !loaded {
		c.n.Add(1)
	}
	return p
}
