package lint

import (
	v1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Warnings lints one webhook configuration or admission policy on its own,
// as the API server does when it is written: every check that needs no
// other object (the deadlock risks, failure policies, timeouts within the
// configuration, side effects, review versions, CEL costs), with
// kube-system and other namespaces taken to have only their name label.
// CEL costs are estimated with the kinds and schemas of schemas (nil: no
// schema, every size bounded by the request). It returns one line per
// finding of severity warning or error (info is admitd lint's, not worth
// a warning on every write), nil for other objects. obj is not changed; it is expected in
// admissionregistration.k8s.io/v1 form, defaulted.
func Warnings(obj runtime.Object, schemas Schemas) []string {
	s := &Set{}
	switch o := obj.(type) {
	case *v1.MutatingWebhookConfiguration:
		s.MutatingWebhooks = append(s.MutatingWebhooks, o)
	case *v1.ValidatingWebhookConfiguration:
		s.ValidatingWebhooks = append(s.ValidatingWebhooks, o)
	case *v1.ValidatingAdmissionPolicy:
		s.ValidatingPolicies = append(s.ValidatingPolicies, o)
	case *v1.MutatingAdmissionPolicy:
		s.MutatingPolicies = append(s.MutatingPolicies, o)
	default:
		return nil
	}
	o := Options{}.withDefaults()
	var fs []Finding
	hooks := s.hooks()
	for i := range hooks {
		fs = append(fs, lintHook(s, &hooks[i])...)
	}
	fs = append(fs, lintTimeouts(hooks, o.RequestDeadline)...)
	fs = append(fs, lintCEL(s, o.CostFraction, schemas)...)
	Sort(fs)
	var out []string
	for _, f := range fs {
		if f.Severity != Info {
			out = append(out, f.Warning())
		}
	}
	return out
}
