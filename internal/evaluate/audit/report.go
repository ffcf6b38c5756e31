package audit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/admitd/admitd/internal/evaluate"
	"github.com/admitd/admitd/pkg/admission/trace"
)

// APIVersion and Kind of a Report's JSON form.
const (
	APIVersion = "audit.admitd.io/v1alpha1"
	Kind       = "AuditReport"
)

// Report is what a candidate configuration would do to the objects
// audited, per webhook and per policy and binding.
type Report struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Operation is UPDATE (each object re-applied unchanged) or CREATE.
	Operation string `json:"operation"`
	// Objects is how many objects were evaluated.
	Objects int `json:"objects"`
	// Policies are the webhooks, policies (per binding) and compiled-in
	// plugins that did anything to an object, in name order.
	Policies []*Policy `json:"policies"`
	// NotEvaluated are the objects that could not be evaluated.
	NotEvaluated []Finding `json:"notEvaluated,omitempty"`
	// Skipped says what was left out of the audit on purpose.
	Skipped []string `json:"skipped,omitempty"`
	// SetupWarnings are the server's warnings while the configuration was
	// created.
	SetupWarnings []string `json:"setupWarnings,omitempty"`

	byKey map[policyKey]*Policy
	// shared are the values findings share.
	shared interner
}

// Policy is what one webhook, one policy through one binding, or one
// compiled-in plugin did.
type Policy struct {
	// Plugin is the admission plugin: ValidatingAdmissionPolicy,
	// MutatingAdmissionPolicy, ValidatingAdmissionWebhook,
	// MutatingAdmissionWebhook, or a compiled-in one.
	Plugin string `json:"plugin"`
	// Name is the policy's or webhook's; Configuration the binding's or
	// the webhook configuration's.
	Name          string `json:"name,omitempty"`
	Configuration string `json:"configuration,omitempty"`
	// Matched is how many objects it ran on.
	Matched   int       `json:"matched"`
	Denied    []Finding `json:"denied,omitempty"`
	Warned    []Finding `json:"warned,omitempty"`
	Annotated []Finding `json:"annotated,omitempty"`
	Mutated   []Finding `json:"mutated,omitempty"`
	Errors    []Finding `json:"errors,omitempty"`
	// Passed are the objects it ran on and had nothing to say about
	// (only for PolicyReports): pointers, as an object passes many
	// policies.
	Passed []*ObjectRef `json:"-"`
	// failedClosed counts the Errors under failurePolicy Fail, which
	// refused the request.
	failedClosed int
}

// Finding is one object and what was said about it.
type Finding struct {
	Object           ObjectRef         `json:"object"`
	Message          string            `json:"message,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Patch            json.RawMessage   `json:"patch,omitempty"`
}

// ObjectRef names an audited object.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
	// Source is the file it came from, when it came from one.
	Source string `json:"source,omitempty"`
}

// String is kind namespace/name.
func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

func refOf(o evaluate.Object) ObjectRef {
	return ObjectRef{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(),
		UID: string(o.GetUID()), Source: o.Source}
}

type policyKey struct{ plugin, name, configuration string }

func newReport(operation string) *Report {
	return &Report{APIVersion: APIVersion, Kind: Kind, Operation: operation, Policies: []*Policy{}, byKey: map[policyKey]*Policy{}}
}

func (r *Report) policy(s trace.Step) *Policy {
	k := policyKey{s.Plugin, s.Name, s.Configuration}
	p, ok := r.byKey[k]
	if !ok {
		p = &Policy{Plugin: s.Plugin, Name: s.Name, Configuration: s.Configuration}
		r.byKey[k] = p
		r.Policies = append(r.Policies, p)
	}
	return p
}

// configured reports a webhook or policy step: those are the configuration
// under audit; a compiled-in plugin is reported only when it refuses.
func configured(s trace.Step) bool { return s.Name != "" }

// add records what the evaluation of o did.
func (r *Report) add(o evaluate.Object, res *evaluate.Result) {
	r.Objects++
	ref := new(ObjectRef)
	*ref = refOf(o)
	if res.Trace == nil {
		r.NotEvaluated = append(r.NotEvaluated, Finding{Object: *ref, Message: statusMessage(res)})
		return
	}
	for _, s := range res.Trace.Steps {
		if s.Outcome == trace.OutcomeSkipped || !s.Matched && s.Outcome == trace.OutcomeAdmitted {
			continue
		}
		if !configured(s) && s.Outcome != trace.OutcomeDenied && s.Outcome != trace.OutcomeError {
			continue
		}
		r.policy(s).add(ref, s, res, &r.shared)
	}
	if res.Decision == trace.Error {
		r.NotEvaluated = append(r.NotEvaluated, Finding{Object: *ref, Message: "admitted, then refused: " + statusMessage(res)})
	}
}

// add records one step; a reinvoked step counts once.
func (p *Policy) add(ref *ObjectRef, s trace.Step, res *evaluate.Result, in *interner) {
	if s.Round == 0 {
		p.Matched++
	}
	said := false
	switch s.Outcome {
	case trace.OutcomeDenied:
		msg := s.Error
		if msg == "" {
			msg = statusMessage(res)
		}
		p.Denied = append(p.Denied, Finding{Object: *ref, Message: in.str(msg)})
		said = true
	case trace.OutcomeError:
		p.Errors = append(p.Errors, Finding{Object: *ref, Message: in.str(s.Error)})
		p.failedClosed++
		said = true
	case trace.OutcomeFailedOpen:
		p.Errors = append(p.Errors, Finding{Object: *ref, Message: in.str("failed open (failurePolicy Ignore): " + s.Error)})
		said = true
	case trace.OutcomeMutated:
		p.Mutated = append(p.Mutated, Finding{Object: *ref, Patch: in.patch(s.Patch)})
		said = true
	}
	if len(s.Warnings) > 0 {
		p.Warned = append(p.Warned, Finding{Object: *ref, Warnings: in.strs(s.Warnings)})
		said = true
	}
	if len(s.AuditAnnotations) > 0 {
		p.Annotated = append(p.Annotated, Finding{Object: *ref, AuditAnnotations: in.annotations(s.AuditAnnotations)})
		said = true
	}
	if !said && s.Round == 0 {
		p.Passed = append(p.Passed, ref)
	}
}

func statusMessage(res *evaluate.Result) string {
	if res.Status != nil {
		return res.Status.Message
	}
	return res.Decision
}

func (r *Report) notEvaluated(u *unstructured.Unstructured, source string, err error) {
	r.NotEvaluated = append(r.NotEvaluated, Finding{Object: refOf(evaluate.Object{Unstructured: u, Source: source}), Message: err.Error()})
}

// finish sorts the policies by plugin order and name, and the objects of
// each finding list by kind, namespace and name (then by what was said),
// so that the report does not depend on the order the objects came in.
func (r *Report) finish(setupWarnings []string) {
	r.SetupWarnings = setupWarnings
	slices.SortStableFunc(r.NotEvaluated, compareFindings)
	for _, p := range r.Policies {
		for _, fs := range [][]Finding{p.Denied, p.Warned, p.Annotated, p.Mutated, p.Errors} {
			slices.SortStableFunc(fs, compareFindings)
		}
		slices.SortStableFunc(p.Passed, func(a, b *ObjectRef) int { return compareRefs(*a, *b) })
	}
	sort.SliceStable(r.Policies, func(i, j int) bool {
		a, b := r.Policies[i], r.Policies[j]
		if a.Plugin != b.Plugin {
			return a.Plugin < b.Plugin
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Configuration < b.Configuration
	})
}

func compareRefs(a, b ObjectRef) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.APIVersion, b.APIVersion), cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID), cmp.Compare(a.Source, b.Source))
}

// compareFindings orders findings by object, then (for the findings of
// objects given twice) by what was said.
func compareFindings(a, b Finding) int {
	if c := compareRefs(a.Object, b.Object); c != 0 {
		return c
	}
	if c := cmp.Or(cmp.Compare(a.Message, b.Message), slices.Compare(a.Warnings, b.Warnings), bytes.Compare(a.Patch, b.Patch)); c != 0 {
		return c
	}
	return cmp.Compare(annotations(a.AuditAnnotations), annotations(b.AuditAnnotations))
}

// Severities a report's --fail-on compares with, least first.
const (
	SeverityNone     = "none"
	SeverityAnnotate = "annotate"
	SeverityMutate   = "mutate"
	SeverityWarn     = "warn"
	SeverityDeny     = "deny"
)

var severityRank = map[string]int{SeverityAnnotate: 1, SeverityMutate: 2, SeverityWarn: 3, SeverityDeny: 4}

// ValidSeverity reports whether s is a --fail-on value.
func ValidSeverity(s string) bool { _, ok := severityRank[s]; return ok || s == SeverityNone }

// Fails reports whether anything of the report is at or above severity
// (none: never). An error under failurePolicy Fail counts as a denial.
func (r *Report) Fails(severity string) bool {
	limit, ok := severityRank[severity]
	if !ok {
		return false
	}
	worst := 0
	for _, p := range r.Policies {
		for rank, fs := range map[int]int{4: len(p.Denied), 3: len(p.Warned), 2: len(p.Mutated), 1: len(p.Annotated)} {
			if fs > 0 && rank > worst {
				worst = rank
			}
		}
		if p.failedClosed > 0 {
			worst = 4
		}
	}
	return worst >= limit
}
