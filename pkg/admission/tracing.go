package admission

import (
	"fmt"
	"sync/atomic"
)

// Skip reasons of a trace step: which check excluded a webhook, policy or
// compiled-in plugin.
// They are constants so that recording a skip allocates nothing.
const (
	SkipRule              = "Rule"              // no rule matches the operation and resource
	SkipScope             = "Scope"             // a rule matches except for its scope
	SkipResourceName      = "ResourceName"      // a rule matches except for its resourceNames
	SkipExcludeRule       = "ExcludeRule"       // an excludeResourceRules entry matches
	SkipNamespaceSelector = "NamespaceSelector" // the namespaceSelector rejects the namespace
	SkipObjectSelector    = "ObjectSelector"    // the objectSelector rejects the object
	SkipMatchCondition    = "MatchCondition"    // a matchCondition is false
	SkipNotReinvoked      = "NotReinvoked"      // reinvocation pass: not due to run again
	SkipParams            = "NoParams"          // the binding's paramRef selects no params
	SkipResource          = "Resource"          // a compiled-in plugin does not look at the request (Scoped)
)

// Explainer says in words, with the values compared, why a step was
// skipped. It is asked only when a trace is read, so a recorder keeps
// references (a compiled selector, a labels map) rather than text.
type Explainer interface {
	Explain() string
}

// Explanation is a fixed Explainer.
type Explanation string

// Explain returns the text.
func (e Explanation) Explain() string { return string(e) }

// Explainf formats an Explanation; use it on paths that run rarely (the
// formatting is done at once).
func Explainf(format string, args ...any) Explanation {
	return Explanation(fmt.Sprintf(format, args...))
}

// StepDetail is what a trace shows of a webhook call or policy evaluation
// beyond the summary fields of its Step.
type StepDetail struct {
	// ReviewVersion is the AdmissionReview version sent, e.g.
	// admission.k8s.io/v1.
	ReviewVersion string
	// FailurePolicy is Fail or Ignore; FailedOpen says that Ignore turned
	// an error into an admission.
	FailurePolicy string
	FailedOpen    bool
	// Patch is the JSON patch applied, as received; Base is the JSON of
	// the object it was applied to (for a field diff), nil when unknown.
	// Neither is copied: the recorder must not reuse the bytes.
	Patch, Base []byte
	// After is the JSON of the object after a step that changed it without
	// a JSON patch (a MutatingAdmissionPolicy); the trace derives the patch
	// from Base and After. Not copied either.
	After []byte
	// Warnings and AuditAnnotations are what this step returned (not
	// copied: the recorder must not change them).
	Warnings         []string
	AuditAnnotations map[string]string
	// Why explains a skip; nil when the step matched.
	Why Explainer
}

// traceState is what a Record keeps for tracing beyond its steps.
type traceState struct {
	// flags holds verboseAsked and dryRunSeen, read without the lock on
	// every plugin's hot path.
	flags atomic.Uint32
	// info is allocated when admission runs, so that a record of a
	// request without admission stays small.
	info *traceInfo
}

// traceInfo is what the chain notes for the trace.
type traceInfo struct {
	// rejectedBy is the plugin whose error ended admission.
	rejectedBy string
	// name and operation are the admitted object's (a create's name is
	// not in its URL).
	name      string
	operation Operation
}

// traceInfoLocked returns the record's traceInfo, allocating it; r.mu is
// held.
func (r *Record) traceInfoLocked() *traceInfo {
	if r.trace.info == nil {
		r.trace.info = &traceInfo{}
	}
	return r.trace.info
}

// SetVerbose asks plugins to trace every webhook and policy they know,
// including those their indexes rule out without looking (an explain dry
// run); by default only those looked at are traced. It takes effect for
// dry runs only.
func (r *Record) SetVerbose(v bool) {
	if v {
		r.trace.flags.Or(verboseAsked)
	} else {
		r.trace.flags.And(^uint32(verboseAsked))
	}
}

const (
	verboseAsked = 1 << iota
	dryRunSeen
)

// Verbose reports whether SetVerbose asked for a full trace of a dry run.
func (r *Record) Verbose() bool {
	return r != nil && r.trace.flags.Load() == verboseAsked|dryRunSeen
}

// markRejected remembers the first plugin whose error ended admission.
func (r *Record) markRejected(plugin string) {
	r.mu.Lock()
	if info := r.traceInfoLocked(); info.rejectedBy == "" {
		info.rejectedBy = plugin
	}
	r.mu.Unlock()
}

// RejectedBy returns the plugin whose error ended admission, or "" when
// admission admitted the request (or did not run).
func (r *Record) RejectedBy() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.trace.info == nil {
		return ""
	}
	return r.trace.info.rejectedBy
}

// noteRequest remembers the object name and operation admission saw.
func (r *Record) noteRequest(a *Attributes) {
	r.mu.Lock()
	r.noteRequestLocked(a)
	r.mu.Unlock()
}

// noteRequestSteps is noteRequest at the start of the mutating phase, also
// reserving room for n steps (see reserveStepsLocked).
func (r *Record) noteRequestSteps(a *Attributes, n int) {
	r.mu.Lock()
	r.reserveStepsLocked(n)
	r.noteRequestLocked(a)
	r.mu.Unlock()
}

// noteRequestLocked is noteRequest with r.mu held.
func (r *Record) noteRequestLocked(a *Attributes) {
	if info := r.traceInfoLocked(); info.operation == "" {
		info.name, info.operation = a.Name, a.Operation
		if a.DryRun {
			r.trace.flags.Or(dryRunSeen)
		}
	}
}

// Request returns the object name, operation and dry-run flag admission
// ran with; empty when it did not run.
func (r *Record) Request() (name string, op Operation, dryRun bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.trace.info == nil {
		return "", "", false
	}
	return r.trace.info.name, r.trace.info.operation, r.trace.flags.Load()&dryRunSeen != 0
}
