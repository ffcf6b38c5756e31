// Package trace is the admission trace of one API request in a versioned,
// documented JSON form (admission.admitd.io/v1alpha1 Trace) and as a
// readable tree: every compiled-in plugin, webhook and policy in chain
// order, matched or skipped with the reason, with the review version, the
// failure policy, the patch (as JSON patch and field diff), warnings, audit
// annotations, the round and the error; plus the request's facts and its
// decision.
//
// A server captures a finished request's admission.Record cheaply
// (Capture) and keeps recent ones in a Ring; the JSON form is built only
// when a trace is read. Traces never hold object bodies, and values that
// come from Secrets and tokens are redacted (see Sensitive).
//
// It is not an audit log: traces are kept in memory, bounded, and lost on
// restart.
package trace

import (
	"encoding/json"
	"time"
)

// APIVersion and Kind of a Trace; ListKind of a TraceList.
const (
	APIVersion = "admission.admitd.io/v1alpha1"
	Kind       = "Trace"
	ListKind   = "TraceList"
)

// Decisions of a traced request.
const (
	// Allowed: admission admitted the request and it succeeded.
	Allowed = "Allowed"
	// Denied: a plugin, webhook or policy rejected the request.
	Denied = "Denied"
	// Error: admission admitted the request but it failed later (a
	// conflict, invalid object, storage error).
	Error = "Error"
)

// Outcomes of a step.
const (
	OutcomeAdmitted   = "admitted"    // ran and admitted (a plugin, a webhook, a policy)
	OutcomeMutated    = "mutated"     // ran and changed the object
	OutcomeSkipped    = "skipped"     // not run: see SkipReason and Reason
	OutcomeDenied     = "denied"      // rejected the request
	OutcomeError      = "error"       // failed (a call or configuration error) under failurePolicy Fail
	OutcomeFailedOpen = "failed-open" // failed, and failurePolicy Ignore admitted the request
)

// Trace is the admission trace of one request.
type Trace struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Request    Request `json:"request"`
	// Decision is Allowed, Denied or Error; Code the HTTP status code
	// answered and Message the Status message of a failed request.
	Decision string `json:"decision"`
	Code     int    `json:"code"`
	Message  string `json:"message,omitempty"`
	// RejectedBy is the plugin that denied the request.
	RejectedBy string `json:"rejectedBy,omitempty"`
	// Duration is the whole request's, as a Go duration ("12.5ms").
	Duration string `json:"duration"`
	// Verbose traces list every webhook and policy the server knows,
	// including those out of scope by rules; others list only those the
	// match index looked at (see the README).
	Verbose bool   `json:"verbose,omitempty"`
	Steps   []Step `json:"steps"`
	// Warnings are the request's Warning headers from admission.
	Warnings []string `json:"warnings,omitempty"`
	// AuditAnnotations are all admission annotations of the request.
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
}

// Request are the facts of a traced request.
type Request struct {
	AuditID string    `json:"auditID"`
	Time    time.Time `json:"time"`
	// User is who the request acts as; Impersonator who sent it, when it
	// impersonated.
	User         string   `json:"user"`
	Groups       []string `json:"groups,omitempty"`
	Impersonator string   `json:"impersonator,omitempty"`
	// Client names the cluster component that sent the request, when its
	// user and User-Agent say so: "kube-controller-manager
	// (replicaset-controller)" for a controller acting as its service
	// account, "kubelet (node-0)" for a node.
	Client string `json:"client,omitempty"`
	// Verb is the API verb (create, update, patch, delete...), Operation
	// the admission operation (CREATE, UPDATE, DELETE, CONNECT).
	Verb        string `json:"verb"`
	Operation   string `json:"operation,omitempty"`
	APIGroup    string `json:"apiGroup,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	DryRun      bool   `json:"dryRun,omitempty"`
}

// Step is one plugin, webhook or policy (binding) considered.
type Step struct {
	// Phase is "mutating" or "validating"; Round 1 is the mutating
	// phase's reinvocation pass.
	Phase string `json:"phase"`
	Round int    `json:"round"`
	// Plugin is the admission plugin; Name the webhook or policy and
	// Configuration its configuration or binding, empty for a plain
	// plugin.
	Plugin        string `json:"plugin"`
	Name          string `json:"name,omitempty"`
	Configuration string `json:"configuration,omitempty"`
	Matched       bool   `json:"matched"`
	// Outcome is one of the Outcome* constants.
	Outcome string `json:"outcome"`
	// SkipReason names the check that excluded a skipped step: Rule,
	// Scope, ResourceName, ExcludeRule, NamespaceSelector, ObjectSelector,
	// MatchCondition, NotReinvoked or NoParams.
	SkipReason string `json:"skipReason,omitempty"`
	// Reason says in words why it was skipped, with the values compared.
	Reason        string `json:"reason,omitempty"`
	ReviewVersion string `json:"reviewVersion,omitempty"`
	FailurePolicy string `json:"failurePolicy,omitempty"`
	FailedOpen    bool   `json:"failedOpen,omitempty"`
	Duration      string `json:"duration,omitempty"`
	// Patch is the JSON patch applied; FieldDiff the same as field paths
	// with old and new values.
	Patch            json.RawMessage   `json:"patch,omitempty"`
	FieldDiff        []FieldChange     `json:"fieldDiff,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Error            string            `json:"error,omitempty"`
}

// FieldChange is one change of a patch: Op is add, replace, remove, move
// or copy; Field a path like spec.containers[1].image; Old the value
// before (absent when unknown or new), New the value after (absent for a
// remove).
type FieldChange struct {
	Op    string          `json:"op"`
	Field string          `json:"field"`
	Old   json.RawMessage `json:"old,omitempty"`
	New   json.RawMessage `json:"new,omitempty"`
}

// List is a list of traces, newest first.
type List struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Items      []Trace `json:"items"`
}
