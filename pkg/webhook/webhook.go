// Package webhook is a small SDK for writing Kubernetes admission webhooks:
// the servers that kube-apiserver (or admitd) calls with an AdmissionReview
// and that answer allowed, denied, or allowed with a JSON patch.
//
// A webhook is a Handler: one method from a decoded Request to a Response. The
// Response constructors (Allowed, Denied, DeniedWithCode, Errored, Patched)
// build the answers, and Patched computes the RFC 6902 patch from the
// difference between the original and the modified object, so nobody writes
// patches by hand. WithValidator and WithDefaulter turn a typed Validator or
// Defaulter (controller-runtime's CustomValidator and CustomDefaulter, for one
// Go type) into a Handler. NewHTTPHandler turns a Handler into an http.Handler
// that speaks admission.k8s.io/v1 and v1beta1 (answering in the version it was
// asked in), limits request sizes, recovers from panics and records Prometheus
// metrics. Server is an HTTPS server for such handlers that reloads its
// certificate when the files change, serves /readyz and shuts down gracefully.
//
// CRD conversion webhooks are Converters: NewConversionHandler answers
// apiextensions.k8s.io/v1 and v1beta1 ConversionReviews with one, and
// SchemeConverter converts typed versions through a Hub, as
// controller-runtime's conversion webhook does.
// Package webhooktest serves a webhook over HTTPS in a test and gives the
// caBundle that trusts it.
//
// It is not a client of the API server, not a framework for controllers, and
// it does not register webhook configurations: it only answers reviews.
package webhook

import (
	"context"
	"fmt"
	"maps"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Handler decides one admission request.
type Handler interface {
	Handle(ctx context.Context, req Request) Response
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, req Request) Response

// Handle calls f(ctx, req).
func (f HandlerFunc) Handle(ctx context.Context, req Request) Response { return f(ctx, req) }

// Request is an admission request, always in its admission.k8s.io/v1 form:
// a v1beta1 review is converted field by field before the Handler sees it.
// Object and OldObject hold the raw JSON the API server sent; DecodeObject and
// DecodeOldObject decode them into typed objects.
type Request struct {
	admissionv1.AdmissionRequest
}

// Response is the answer to one request. Build it with Allowed, Denied,
// DeniedWithCode, Errored, Patched or PatchedJSON, then add warnings and
// audit annotations. The UID is filled in from the request when the answer
// is sent.
type Response struct {
	admissionv1.AdmissionResponse
}

// Allowed admits the request. A non-empty msg is sent as status.message
// (the API server does not show it to clients).
func Allowed(msg string) Response {
	r := Response{}
	r.Allowed = true
	if msg != "" {
		r.Result = &metav1.Status{Message: msg}
	}
	return r
}

// Denied rejects the request with msg as status.message. The API server
// answers the client with 400 and the message
// `admission webhook "<name>" denied the request: <msg>`.
func Denied(msg string) Response {
	return DeniedWithCode(0, "", msg)
}

// DeniedWithCode rejects the request with the given HTTP code, reason and
// message; a zero code lets the API server use 400, an empty reason or message
// is left out. The API server passes the reason on to the client (kubectl
// prints it in parentheses) and uses it as the message when msg is empty.
func DeniedWithCode(code int32, reason metav1.StatusReason, msg string) Response {
	r := Response{}
	r.Result = &metav1.Status{Code: code, Reason: reason, Message: msg}
	return r
}

// Errored rejects the request because the webhook could not decide: status
// Failure with the code (e.g. http.StatusInternalServerError, passed through
// to the client by the API server) and err's text as the message.
func Errored(code int32, err error) Response {
	r := Response{}
	r.Result = &metav1.Status{Status: metav1.StatusFailure, Code: code, Message: err.Error()}
	return r
}

// Patched admits the request with the JSON patch that turns original into
// modified. Each may be raw JSON ([]byte or json.RawMessage) or a value that
// encoding/json marshals, such as a runtime.Object; encode both the same way
// (decode the request's object, deep-copy it, change the copy, pass both) so
// the patch holds only the changes. Equal objects give an answer without a
// patch. If the objects cannot be encoded or are not JSON objects, the answer
// is Errored with code 500.
func Patched(original, modified any) Response {
	a, err := toJSON(original)
	if err != nil {
		return Errored(http.StatusInternalServerError, fmt.Errorf("encoding the original object: %w", err))
	}
	b, err := toJSON(modified)
	if err != nil {
		return Errored(http.StatusInternalServerError, fmt.Errorf("encoding the modified object: %w", err))
	}
	ops, err := diffJSON(a, b)
	if err != nil {
		return Errored(http.StatusInternalServerError, err)
	}
	if len(ops) == 0 {
		return Allowed("")
	}
	patch, err := marshalOps(ops)
	if err != nil {
		return Errored(http.StatusInternalServerError, err)
	}
	return PatchedJSON(patch)
}

// PatchedJSON admits the request with patch, an RFC 6902 JSON patch sent as
// is. An empty patch gives an answer without one.
func PatchedJSON(patch []byte) Response {
	r := Allowed("")
	if len(patch) > 0 {
		pt := admissionv1.PatchTypeJSONPatch
		r.Patch, r.PatchType = patch, &pt
	}
	return r
}

// WithWarnings returns r with warnings appended; the API server passes them
// to the client as Warning headers.
func (r Response) WithWarnings(warnings ...string) Response {
	r.Warnings = append(r.Warnings[:len(r.Warnings):len(r.Warnings)], warnings...)
	return r
}

// WithAuditAnnotation returns r with the audit annotation key=value added;
// the API server records it, prefixed with the webhook's name, in the audit
// event of the request.
func (r Response) WithAuditAnnotation(key, value string) Response {
	m := maps.Clone(r.AuditAnnotations)
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	r.AuditAnnotations = m
	return r
}
