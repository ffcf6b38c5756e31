package backgroundaudit

import (
	"slices"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/admitd/admitd/pkg/admission/policies"
)

// auditSource is the server's policy snapshot narrowed to what the
// background audit evaluates: the ValidatingAdmissionPolicies and those of
// their bindings whose validationActions include Audit, with the actions
// narrowed to Audit alone (a scan denies nothing and warns no one). The
// narrowed snapshot is built once per snapshot of the server, so the
// plugin compiles each policy once per change, as the server's does.
type auditSource struct {
	base policies.Source

	mu     sync.Mutex
	from   *policies.Snapshot
	narrow *policies.Snapshot
}

var _ policies.Source = (*auditSource)(nil)

// Current returns the narrowed snapshot of the base's current one.
func (s *auditSource) Current() *policies.Snapshot {
	snap := s.base.Current()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.from != snap || s.narrow == nil {
		s.from, s.narrow = snap, auditOnly(snap)
	}
	return s.narrow
}

// auditOnly returns the validating policies of snap with their Audit
// bindings; mutating policies are left out.
func auditOnly(snap *policies.Snapshot) *policies.Snapshot {
	out := &policies.Snapshot{ValidatingPolicies: snap.ValidatingPolicies}
	for _, b := range snap.ValidatingBindings {
		if !slices.Contains(b.Spec.ValidationActions, admissionregistrationv1.Audit) {
			continue
		}
		cp := *b
		cp.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}
		out.ValidatingBindings = append(out.ValidatingBindings, &cp)
	}
	return out
}

// auditBinding is one Audit binding with its policy.
type auditBinding struct {
	policy  *admissionregistrationv1.ValidatingAdmissionPolicy
	binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// bindings pairs the Audit bindings of a narrowed snapshot with their
// policies, in binding order; a binding of a missing policy is left out.
func bindings(snap *policies.Snapshot) []auditBinding {
	byName := make(map[string]*admissionregistrationv1.ValidatingAdmissionPolicy, len(snap.ValidatingPolicies))
	for _, p := range snap.ValidatingPolicies {
		byName[p.Name] = p
	}
	var out []auditBinding
	for _, b := range snap.ValidatingBindings {
		if p, ok := byName[b.Spec.PolicyName]; ok {
			out = append(out, auditBinding{policy: p, binding: b})
		}
	}
	return out
}
