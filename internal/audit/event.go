// Package audit is admitd's API audit log: it reads an audit.k8s.io/v1
// Policy, decides per request at which level and in which stages the request
// is recorded, builds audit.k8s.io/v1 Events and appends them, one JSON object
// per line, to a log file, as kube-apiserver's --audit-policy-file and
// --audit-log-path do (log backend, json format, blocking mode).
//
// It does not know the HTTP server: the server describes each request in a
// Request and calls an Auditor. It is not a general audit framework either:
// there are no webhook or buffered backends, no log rotation, and only the v1
// policy format.
package audit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// APIVersion and the kinds written in and read from audit.k8s.io/v1 objects.
const (
	APIVersion  = "audit.k8s.io/v1"
	KindEvent   = "Event"
	KindPolicy  = "Policy"
	microFormat = "2006-01-02T15:04:05.000000Z07:00"
)

// Level says how much of a request is recorded.
type Level string

// The audit levels, least detailed first.
const (
	// LevelNone records nothing.
	LevelNone Level = "None"
	// LevelMetadata records who did what to which object, without bodies.
	LevelMetadata Level = "Metadata"
	// LevelRequest adds the request body.
	LevelRequest Level = "Request"
	// LevelRequestResponse adds the response body.
	LevelRequestResponse Level = "RequestResponse"
)

func (l Level) ord() int {
	switch l {
	case LevelMetadata:
		return 1
	case LevelRequest:
		return 2
	case LevelRequestResponse:
		return 3
	}
	return 0 // None, and unknown levels as upstream
}

// Less reports whether l records less than o.
func (l Level) Less(o Level) bool { return l.ord() < o.ord() }

// Stage is the point in a request's life an event is written at.
type Stage string

// The stages, in the order a request goes through them.
const (
	// StageRequestReceived is written as soon as the request is
	// authenticated, before it is handled.
	StageRequestReceived Stage = "RequestReceived"
	// StageResponseStarted is written for long-running requests (watch,
	// exec, …) once the response headers are sent.
	StageResponseStarted Stage = "ResponseStarted"
	// StageResponseComplete is written when the response is complete.
	StageResponseComplete Stage = "ResponseComplete"
	// StagePanic is written instead of ResponseComplete when the handler
	// panicked.
	StagePanic Stage = "Panic"
)

var allStages = []Stage{StageRequestReceived, StageResponseStarted, StageResponseComplete, StagePanic}

// Event is an audit.k8s.io/v1 Event. Field order and names are those of the
// upstream type, so a log line is byte-compatible with kube-apiserver's.
type Event struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`

	Level      Level  `json:"level"`
	AuditID    string `json:"auditID"`
	Stage      Stage  `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	// User is the user who sent the request (not the impersonated one).
	User             authenticationv1.UserInfo  `json:"user"`
	ImpersonatedUser *authenticationv1.UserInfo `json:"impersonatedUser,omitempty"`
	// AuthenticationMetadata is set for constrained impersonation.
	AuthenticationMetadata *AuthenticationMetadata `json:"authenticationMetadata,omitempty"`
	SourceIPs              []string                `json:"sourceIPs,omitempty"`
	UserAgent              string                  `json:"userAgent,omitempty"`
	ObjectRef              *ObjectReference        `json:"objectRef,omitempty"`
	ResponseStatus         *ResponseStatus         `json:"responseStatus,omitempty"`

	RequestObject  json.RawMessage `json:"requestObject,omitempty"`
	ResponseObject json.RawMessage `json:"responseObject,omitempty"`

	RequestReceivedTimestamp MicroTime `json:"requestReceivedTimestamp"`
	StageTimestamp           MicroTime `json:"stageTimestamp"`

	Annotations map[string]string `json:"annotations,omitempty"`
}

// AuthenticationMetadata is extra information about how the user was
// authenticated.
type AuthenticationMetadata struct {
	ImpersonationConstraint string `json:"impersonationConstraint,omitempty"`
}

// ObjectReference names the object a resource request is about.
type ObjectReference struct {
	Resource        string `json:"resource,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	APIGroup        string `json:"apiGroup,omitempty"`
	APIVersion      string `json:"apiVersion,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	Subresource     string `json:"subresource,omitempty"`
}

// ResponseStatus is the part of a metav1.Status an event keeps. Upstream
// always sets Code; Status, Message, Reason and Details come from a Status
// response body (errors, and some successful deletes).
type ResponseStatus struct {
	// Metadata is always written as {} (metav1.ListMeta).
	Metadata struct{}        `json:"metadata"`
	Status   string          `json:"status,omitempty"`
	Message  string          `json:"message,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Details  json.RawMessage `json:"details,omitempty"`
	Code     int32           `json:"code,omitempty"`
}

// PanicStatus is the status upstream records when a handler panics with v.
func PanicStatus(v any) *ResponseStatus {
	return &ResponseStatus{Code: http.StatusInternalServerError, Status: "Failure", Reason: "InternalError",
		Message: fmt.Sprintf("APIServer panic'd: %v", v)}
}

// closedEarlyStatus is recorded when the handler wrote no response at all.
func closedEarlyStatus() *ResponseStatus {
	return &ResponseStatus{Code: http.StatusOK, Status: "Success", Message: "Connection closed early"}
}

// MicroTime is a timestamp written in UTC with microseconds
// (metav1.MicroTime); the zero time is written as null.
type MicroTime time.Time

// MarshalJSON implements json.Marshaler.
func (t MicroTime) MarshalJSON() ([]byte, error) {
	tt := time.Time(t)
	if tt.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(tt.UTC().Format(microFormat))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *MicroTime) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == nil || *s == "" {
		*t = MicroTime{}
		return nil
	}
	tt, err := time.Parse(microFormat, *s)
	if err != nil {
		return err
	}
	*t = MicroTime(tt.Local())
	return nil
}
