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
	req Request
	out Outcome
	// rec is the finished request's record, kept as it is (nothing
	// writes to it once the request has ended): copying its steps,
	// annotations and warnings waits until the trace is read.
	rec *admission.Record
	// bytes is what the entry holds (Bytes).
	bytes int64
}

// entryBytes is what an Entry holds beyond its record.
const entryBytes = 512

// Bytes estimates the memory the entry holds: its record's trace
// (admission.Record.TraceBytes) and the request's facts.
func (e *Entry) Bytes() int64 { return e.bytes }

// Capture takes the trace of a finished request from its record, or
// returns nil when admission left no step in it: the request did not run
// admission, or ran a chain in which nothing handles its operation and no
// webhook or policy was looked at — except a CONNECT, which the default
// plugins do not handle: its trace says that admission let it through. It
// is cheap: the record is kept, not copied, and the JSON form is built by
// Entry.Trace. The caller must not write to rec again.
func Capture(req Request, out Outcome, rec *admission.Record) *Entry {
	if rec == nil || !rec.HasSteps() && !connectRanAdmission(rec) {
		return nil
	}
	rec.ReleasePluginState() // the request has ended
	n := entryBytes + len(req.User) + len(req.Impersonator) + len(req.Client) + len(req.Namespace) + len(req.Name) + len(out.Message)
	for _, g := range req.Groups {
		n += len(g)
	}
	return &Entry{req: req, out: out, rec: rec, bytes: int64(n + rec.TraceBytes())}
}

// connectRanAdmission reports whether the record's request is a CONNECT
// that ran admission. (A CREATE, UPDATE or DELETE always leaves a step in
// the server's chain: NamespaceLifecycle handles every operation.)
func connectRanAdmission(rec *admission.Record) bool {
	_, op, _ := rec.Request()
	return op == admission.Connect
}

// Request returns the captured request's facts.
func (e *Entry) Request() Request { return e.req }

// Decision is Allowed, Denied or Error.
func (e *Entry) Decision() string {
	switch {
	case e.rec.RejectedBy() != "":
		return Denied
	case e.out.Code >= 400:
		return Error
	}
	return Allowed
}

// Trace builds the JSON form, redacting what Sensitive says.
func (e *Entry) Trace() *Trace {
	steps, annotations := e.rec.Steps(), e.rec.Annotations(admission.LevelRequestResponse)
	t := &Trace{APIVersion: APIVersion, Kind: Kind, Request: e.req, Decision: e.Decision(), Code: e.out.Code,
		Message: e.out.Message, RejectedBy: e.rec.RejectedBy(), Duration: formatDuration(e.out.Duration), Verbose: e.rec.Verbose(),
		Steps: make([]Step, 0, len(steps)), Warnings: e.rec.Warnings()}
	if name, op, dryRun := e.rec.Request(); op != "" {
		if t.Request.Name == "" {
			t.Request.Name = name
		}
		t.Request.Operation, t.Request.DryRun = string(op), dryRun
	}
	secret := Sensitive(e.req.APIGroup, e.req.Resource, e.req.Subresource)
	for _, s := range steps {
		t.Steps = append(t.Steps, stepOf(s, secret))
	}
	if len(annotations) > 0 {
		t.AuditAnnotations = make(map[string]string, len(annotations))
		for _, a := range annotations {
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
	patch := d.Patch
	if len(patch) == 0 && d.Base != nil && d.After != nil {
		patch = patchBetween(d.Base, d.After)
	}
	if len(patch) > 0 {
		out.Patch, out.FieldDiff = patchAndDiff(patch, d.Base, secret)
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
