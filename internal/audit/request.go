package audit

import (
	"encoding/json"
	"maps"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	sigsjson "sigs.k8s.io/json"

	"github.com/admitd/admitd/pkg/admission"
)

const (
	maxUserAgentLength      = 1024
	userAgentTruncateSuffix = "...TRUNCATED"
)

// Request is what the server knows about one API request, for its audit
// events. The server fills it in as the request progresses; the Auditor
// decides what the events show at their level.
type Request struct {
	AuditID    string
	ReceivedAt time.Time
	// FinishedAt stamps ResponseStarted, ResponseComplete and Panic events;
	// zero means the time the event is written.
	FinishedAt time.Time
	// RequestURI is the path and query as sent (URL.RequestURI()).
	RequestURI string
	// Verb is the authorizer verb: get, list, watch, create, update, patch,
	// delete, deletecollection; the lower-case method for non-resource
	// requests.
	Verb string
	// User is who authenticated; ImpersonatedUser whom they act as.
	User             authenticationv1.UserInfo
	ImpersonatedUser *authenticationv1.UserInfo
	// ImpersonationConstraint is the constrained-impersonation mode used.
	ImpersonationConstraint string
	// SourceIPs as SourceIPs returns them.
	SourceIPs []string
	// UserAgent is truncated to 1024 bytes when written.
	UserAgent string

	// Resource is the request's resource, from the URL alone; nil for
	// non-resource requests. Its UID and ResourceVersion are normally
	// empty: they come from RequestObject.
	Resource *ObjectReference
	// Path is the URL path, for nonResourceURLs rules.
	Path string

	// RequestObject is the decoded request body encoded as JSON in the
	// request's version. Its metadata fills in the namespace, name, uid and
	// resourceVersion the URL did not give.
	RequestObject json.RawMessage
	// RequestPatch is the body of a PATCH; it is logged as requestObject
	// but says nothing about the object. Set at most one of the two.
	RequestPatch json.RawMessage
	// ResponseObject is the response body (an object, a list or a Status).
	ResponseObject json.RawMessage
	// ResponseStatus has the response code and, for a Status body, its
	// status, message, reason and details. Nil means no response was
	// written, which is logged as upstream fakes it: 200 "Connection closed
	// early".
	ResponseStatus *ResponseStatus

	// Panic is the value the handler panicked with; when set, the final
	// event is a Panic event with a 500 status instead of ResponseComplete.
	Panic any

	// Admission holds the annotations admission added; each is logged if
	// its level is at most the event's.
	Admission *admission.Record
	// Annotations are other audit annotations (authorization decision,
	// latency), logged at every level from Metadata. On a key conflict the
	// value here wins over an admission annotation.
	Annotations map[string]string
}

// Attributes returns the request's attributes for policy evaluation.
func (r *Request) Attributes() Attributes {
	a := Attributes{User: r.User.Username, Groups: r.User.Groups, Verb: r.Verb, Path: r.Path}
	if r.Resource != nil {
		a.ResourceRequest = true
		a.APIGroup = r.Resource.APIGroup
		a.Resource = r.Resource.Resource
		a.Subresource = r.Resource.Subresource
		a.Namespace = r.Resource.Namespace
		a.Name = r.Resource.Name
	}
	return a
}

// NewEvent builds the event of r for stage under rc, the way upstream's
// audit filter, handlers and admission fill it in:
//
//   - RequestReceived is written before the request is handled: it has the
//     user, source, URL-derived objectRef and timestamps only; its
//     stageTimestamp equals requestReceivedTimestamp.
//   - Later stages add impersonatedUser, the objectRef details taken from
//     the request object, responseStatus, annotations and, from level
//     Request, requestObject and, at RequestResponse, responseObject.
//   - Panic has the 500 InternalError status of PanicStatus(r.Panic).
//
// It returns nil at level None.
func NewEvent(r *Request, rc RequestConfig, stage Stage) *Event {
	if !LevelNone.Less(rc.Level) {
		return nil
	}
	ev := &Event{
		Kind: KindEvent, APIVersion: APIVersion, Level: rc.Level, AuditID: r.AuditID, Stage: stage,
		RequestURI: r.RequestURI, Verb: r.Verb, User: r.User, SourceIPs: r.SourceIPs, UserAgent: truncateUserAgent(r.UserAgent),
		RequestReceivedTimestamp: MicroTime(r.ReceivedAt), StageTimestamp: MicroTime(r.ReceivedAt),
	}
	if r.Resource != nil {
		ref := *r.Resource
		ev.ObjectRef = &ref
	}
	if stage == StageRequestReceived {
		return ev
	}
	ev.StageTimestamp = MicroTime(r.FinishedAt)
	ev.ImpersonatedUser = r.ImpersonatedUser
	if r.ImpersonatedUser != nil && r.ImpersonationConstraint != "" {
		ev.AuthenticationMetadata = &AuthenticationMetadata{ImpersonationConstraint: r.ImpersonationConstraint}
	}
	if r.RequestObject != nil {
		fillObjectRef(ev, r.RequestObject)
	}
	switch {
	case stage == StagePanic:
		ev.ResponseStatus = PanicStatus(r.Panic)
	case r.ResponseStatus != nil:
		st := *r.ResponseStatus
		ev.ResponseStatus = &st
	default:
		ev.ResponseStatus = closedEarlyStatus()
	}
	if !rc.Level.Less(LevelRequest) {
		if r.RequestObject != nil {
			ev.RequestObject = withoutCredentials(ev.ObjectRef, bodyForLog(r.RequestObject, rc.OmitManagedFields))
		} else {
			ev.RequestObject = bodyForLog(r.RequestPatch, false)
		}
	}
	if !rc.Level.Less(LevelRequestResponse) && r.ResponseObject != nil {
		ev.ResponseObject = withoutCredentials(ev.ObjectRef, bodyForLog(r.ResponseObject, rc.OmitManagedFields))
	}
	ev.Annotations = annotations(r, rc.Level)
	return ev
}

// fillObjectRef completes the objectRef from the request object's metadata
// where the URL left a field empty (upstream LogRequestObject).
func fillObjectRef(ev *Event, obj json.RawMessage) {
	var o struct {
		Metadata *struct {
			Namespace       string `json:"namespace"`
			Name            string `json:"name"`
			UID             string `json:"uid"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	// Case-sensitive, as upstream's meta.Accessor on the decoded object: a
	// custom resource's own "Metadata" is not its metadata.
	if sigsjson.UnmarshalCaseSensitivePreserveInts(obj, &o) != nil || o.Metadata == nil {
		return
	}
	if ev.ObjectRef == nil {
		ev.ObjectRef = &ObjectReference{}
	}
	ref, m := ev.ObjectRef, o.Metadata
	setIfEmpty(&ref.Namespace, m.Namespace)
	setIfEmpty(&ref.Name, m.Name)
	setIfEmpty(&ref.UID, m.UID)
	setIfEmpty(&ref.ResourceVersion, m.ResourceVersion)
}

func setIfEmpty(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

func annotations(r *Request, level Level) map[string]string {
	out := maps.Clone(r.Annotations)
	if r.Admission != nil {
		for _, a := range r.Admission.Annotations(admissionLevel(level)) {
			if out == nil {
				out = map[string]string{}
			}
			if _, ok := out[a.Key]; !ok {
				out[a.Key] = a.Value
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func admissionLevel(l Level) admission.AuditLevel {
	switch l {
	case LevelMetadata:
		return admission.LevelMetadata
	case LevelRequest:
		return admission.LevelRequest
	case LevelRequestResponse:
		return admission.LevelRequestResponse
	}
	return admission.LevelNone
}

func truncateUserAgent(ua string) string {
	if len(ua) > maxUserAgentLength {
		return ua[:maxUserAgentLength] + userAgentTruncateSuffix
	}
	return ua
}

// SourceIPs returns the client addresses of req as upstream records them:
// the X-Forwarded-For entries, then X-Real-Ip unless already listed, then
// the connection's remote address unless it is the last one listed.
func SourceIPs(req *http.Request) []string {
	ips := utilnet.SourceIPs(req)
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}
