package trace

import (
	"strings"
	"time"

	"github.com/admitd/admitd/pkg/admission"
)

// Outcome is how a traced request ended.
type Outcome struct {
	// Code is the HTTP status code answered; Message the Status message
	// of a failed request.
	Code    int
	Message string
	// Duration is the whole request's.
	Duration time.Duration
}

// Entry is a captured request: what its Trace is built from, when read.
type Entry struct {
	req         Request
	out         Outcome
	steps       []admission.Step
	annotations []admission.Annotation
	warnings    []string
	rejectedBy  string
	verbose     bool
}

// Capture takes the trace of a finished request from its record: copies of
// the steps, annotations and warnings (the record is not kept). It is
// cheap: the JSON form is built by Entry.Trace.
func Capture(req Request, out Outcome, rec *admission.Record) *Entry {
	e := &Entry{req: req, out: out}
	if rec != nil {
		e.steps = rec.Steps()
		e.annotations = rec.Annotations(admission.LevelRequestResponse)
		e.warnings = rec.Warnings()
		e.rejectedBy = rec.RejectedBy()
		e.verbose = rec.Verbose()
		name, op := rec.Request()
		if e.req.Name == "" {
			e.req.Name = name
		}
		if op != "" {
			e.req.Operation = string(op)
		}
	}
	return e
}

// Request returns the captured request's facts.
func (e *Entry) Request() Request { return e.req }

// Decision is Allowed, Denied or Error.
func (e *Entry) Decision() string {
	switch {
	case e.rejectedBy != "":
		return Denied
	case e.out.Code >= 400:
		return Error
	}
	return Allowed
}

// HasSteps reports whether admission ran for the request.
func (e *Entry) HasSteps() bool { return len(e.steps) > 0 }

// Trace builds the JSON form, redacting what Sensitive says.
func (e *Entry) Trace() *Trace {
	t := &Trace{APIVersion: APIVersion, Kind: Kind, Request: e.req, Decision: e.Decision(), Code: e.out.Code,
		Message: e.out.Message, RejectedBy: e.rejectedBy, Duration: formatDuration(e.out.Duration), Verbose: e.verbose,
		Steps: make([]Step, 0, len(e.steps)), Warnings: e.warnings}
	secret := Sensitive(e.req.APIGroup, e.req.Resource, e.req.Subresource)
	for _, s := range e.steps {
		t.Steps = append(t.Steps, stepOf(s, secret))
	}
	if len(e.annotations) > 0 {
		t.AuditAnnotations = make(map[string]string, len(e.annotations))
		for _, a := range e.annotations {
			v := a.Value
			if secret && strings.HasPrefix(a.Key, "patch.webhook.admission.k8s.io/") {
				v = Redacted
			}
			t.AuditAnnotations[a.Key] = v
		}
	}
	return t
}

// Redacted replaces a value a trace does not show.
const Redacted = "REDACTED"

// Sensitive reports whether objects of the resource carry credentials, so
// that the values of their patches are redacted: Secrets, TokenReviews and
// service-account TokenRequests.
func Sensitive(group, resource, subresource string) bool {
	switch {
	case group == "" && resource == "secrets":
		return true
	case group == "" && resource == "serviceaccounts" && subresource == "token":
		return true
	case group == "authentication.k8s.io" && resource == "tokenreviews":
		return true
	}
	return false
}

func stepOf(s admission.Step, secret bool) Step {
	out := Step{Phase: phaseOf(s), Round: s.Round, Plugin: s.Plugin, Name: s.Name, Configuration: s.Config,
		Matched: s.Matched, SkipReason: s.Skip, Error: s.Err, Outcome: outcomeOf(s)}
	if s.Duration > 0 {
		out.Duration = formatDuration(s.Duration)
	}
	switch {
	case strings.HasPrefix(s.Reason, "failed: "):
		out.Error = strings.TrimPrefix(s.Reason, "failed: ")
	case s.Reason != "" && !isPlainReason(s.Reason):
		out.Reason = s.Reason
	}
	d := s.Detail
	if d == nil {
		return out
	}
	out.ReviewVersion, out.FailurePolicy, out.FailedOpen = d.ReviewVersion, d.FailurePolicy, d.FailedOpen
	if d.Why != nil {
		out.Reason = d.Why.Explain()
	}
	out.Warnings = d.Warnings
	if len(d.AuditAnnotations) > 0 {
		out.AuditAnnotations = d.AuditAnnotations
	}
	if len(d.Patch) > 0 {
		out.Patch, out.FieldDiff = patchAndDiff(d.Patch, d.Base, secret)
	}
	return out
}

// isPlainReason reports the summary words recorders leave in Step.Reason,
// which the Outcome already says.
func isPlainReason(r string) bool {
	switch r {
	case "admit", "validate", "called", "denied", "error", "skipped", "admitted", "evaluated":
		return true
	}
	return false
}

func phaseOf(s admission.Step) string {
	if s.Reason == "validate" || strings.HasPrefix(s.Plugin, "Validating") {
		return "validating"
	}
	return "mutating"
}

func outcomeOf(s admission.Step) string {
	failedOpen := s.Detail != nil && s.Detail.FailedOpen
	switch {
	case s.Skip != "" && s.Err != "":
		return OutcomeError
	case s.Skip != "":
		return OutcomeSkipped
	case failedOpen && (s.Err != "" || s.Reason == "configuration error"):
		return OutcomeFailedOpen
	case s.Reason == "denied", strings.HasPrefix(s.Reason, "failed: "):
		return OutcomeDenied
	case s.Err != "" && (s.Reason == "admit" || s.Reason == "validate" || s.Reason == ""):
		return OutcomeDenied
	case s.Err != "":
		return OutcomeError
	case s.Mutated:
		return OutcomeMutated
	}
	return OutcomeAdmitted
}

// formatDuration rounds to a precision a reader wants.
func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(100 * time.Nanosecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
