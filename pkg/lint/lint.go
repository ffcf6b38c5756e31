// Package lint checks admission configurations — webhook configurations,
// ValidatingAdmissionPolicies, MutatingAdmissionPolicies, their bindings
// and params — for the mistakes that hurt a cluster: webhooks that can
// deadlock the control plane, failure policies and timeouts that turn one
// slow webhook into an outage, side effects that break dry runs, review
// versions on their way out, certificates that do not verify or expire
// soon, policies and bindings that do not fit together, and CEL
// expressions close to their cost limit.
//
// Each Finding carries a stable rule ID (AL001…, listed by Rules), a
// severity, why it matters and how to fix it. Objects come from files
// (Load, Decode) or from a server (FromServer); Run lints a Set, and
// Warnings lints one object as the API server does when it is written.
//
// It reports risks; it does not validate objects as the API server does
// (pkg/apis/admissionregistration does that) and it never changes them.
package lint

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Severity says how bad a finding is.
type Severity int

// Severities, from least to most severe.
const (
	Info Severity = iota
	Warning
	Error
)

var severityNames = [...]string{Info: "info", Warning: "warning", Error: "error"}

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	if s >= 0 && int(s) < len(severityNames) {
		return severityNames[s]
	}
	return "unknown"
}

// ParseSeverity reads "info", "warning" or "error".
func ParseSeverity(s string) (Severity, bool) {
	i := slices.Index(severityNames[:], s)
	return Severity(i), i >= 0
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Object names the configuration object a finding is about.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Source is the file (and document) it was read from, or the server.
	Source string `json:"source,omitempty"`
}

// Finding is one problem found in one object.
type Finding struct {
	// ID is the rule's stable identifier, e.g. "AL001".
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	Object   Object   `json:"object"`
	// Webhook is the webhook's name within a configuration, if any.
	Webhook string `json:"webhook,omitempty"`
	// Field is the path of the field at fault, e.g. "webhooks[0].rules".
	Field string `json:"field,omitempty"`
	// Message says what was found, with the values involved.
	Message string `json:"message"`
	// Why and Fix are the rule's explanation and remedy.
	Why string `json:"why"`
	Fix string `json:"fix"`
}

// Options tune Run. The zero value lints without network access.
type Options struct {
	// Probe connects over TLS to URL webhooks to check their certificate
	// against the caBundle and its expiry. Default false.
	Probe bool
	// ProbeTimeout bounds one probe. Default 5s.
	ProbeTimeout time.Duration
	// ExpiryWarning is how close to expiry a certificate is reported.
	// Default 30 days.
	ExpiryWarning time.Duration
	// RequestDeadline is the server's request timeout the webhooks'
	// timeouts are compared with. Default 60s, kube-apiserver's.
	RequestDeadline time.Duration
	// CostFraction is the share of StaticEstimatedCostLimit (10,000,000,
	// the estimate above which kube-apiserver refuses an expression it
	// estimates) above which a CEL expression's estimated cost is reported
	// as info ("nearly refused"); above the limit it is a warning.
	// Default 0.9.
	CostFraction float64
	// Schemas gives the kinds policies match and their schemas, so that
	// CEL costs are estimated with the types upstream has; the Set's
	// CustomResourceDefinitions are added on top. Nil: only those CRDs.
	Schemas Schemas
	// Now is the time certificates are checked at. Default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 5 * time.Second
	}
	if o.ExpiryWarning <= 0 {
		o.ExpiryWarning = 30 * 24 * time.Hour
	}
	if o.RequestDeadline <= 0 {
		o.RequestDeadline = 60 * time.Second
	}
	if o.CostFraction <= 0 {
		o.CostFraction = 0.9
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Run lints every object of s and returns the findings sorted by object,
// webhook and rule.
func Run(ctx context.Context, s *Set, o Options) []Finding {
	o = o.withDefaults()
	var out []Finding
	hooks := s.hooks()
	for i := range hooks {
		out = append(out, lintHook(s, &hooks[i])...)
	}
	out = append(out, lintTimeouts(hooks, o.RequestDeadline)...)
	if o.Probe {
		out = append(out, probeHooks(ctx, hooks, o)...)
	}
	out = append(out, lintPolicies(s)...)
	out = append(out, lintCEL(s, o.CostFraction, o.Schemas)...)
	Sort(out)
	return out
}

// lintHook runs the checks that need one webhook and the set's namespaces
// and services.
func lintHook(s *Set, h *hook) []Finding {
	var out []Finding
	out = append(out, lintInterception(s, h)...)
	out = append(out, lintFailOnWildcard(h)...)
	out = append(out, lintSideEffects(h)...)
	out = append(out, lintReviewVersions(h)...)
	return out
}

// Sort orders findings by source object, webhook, rule ID and message.
func Sort(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Object.Kind, b.Object.Kind), cmp.Compare(a.Object.Namespace, b.Object.Namespace),
			cmp.Compare(a.Object.Name, b.Object.Name), cmp.Compare(a.Webhook, b.Webhook),
			cmp.Compare(a.ID, b.ID), cmp.Compare(a.Message, b.Message))
	})
}

// Worst returns the highest severity among fs, and false when fs is empty.
func Worst(fs []Finding) (Severity, bool) {
	if len(fs) == 0 {
		return Info, false
	}
	w := Info
	for _, f := range fs {
		w = max(w, f.Severity)
	}
	return w, true
}
