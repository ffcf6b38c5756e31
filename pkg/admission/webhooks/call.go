package webhooks

import (
	"context"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/admitd/admitd/pkg/admission"
)

// defaultTimeout is the call timeout when a hook sets none.
const defaultTimeout = 10 * time.Second

// call sends one AdmissionReview to a hook and returns its verified
// response. Every failure is a *callError.
func (d *dispatcher) call(ctx context.Context, h *hook, a *admission.Attributes, inv *invocation, mutating bool) (*admissionv1.AdmissionResponse, error) {
	version, ok := reviewVersion(h.AdmissionReviewVersions)
	if !ok {
		return nil, &callError{Webhook: h.Name, Reason: errNoKnownVersion, Code: 400}
	}
	cl, err := d.clients.get(h)
	if err != nil {
		return nil, &callError{Webhook: h.Name, Reason: err, Code: 500}
	}
	timeout := defaultTimeout
	if h.TimeoutSeconds != nil {
		timeout = time.Duration(*h.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	uid := types.UID(uuid.NewUUID())
	req, err := newRequest(a, inv, uid)
	if err != nil {
		return nil, &callError{Webhook: h.Name, Reason: err, Code: 500}
	}
	body, err := encodeReview("admission.k8s.io/"+version, req)
	if err != nil {
		return nil, &callError{Webhook: h.Name, Reason: err, Code: 500}
	}
	start := time.Now()
	data, code, err := cl.post(ctx, body)
	if err != nil {
		a.Record.AddWebhookCall(mutating, time.Since(start))
		return nil, &callError{Webhook: h.Name, Reason: err, Code: code}
	}
	resp, err := decodeResponse(data, version, uid, mutating)
	a.Record.AddWebhookCall(mutating, time.Since(start))
	if err != nil {
		return nil, &callError{Webhook: h.Name, Reason: err, Code: 503}
	}
	return resp, nil
}

// recordResponse adds a verified response's audit annotations (prefixed
// with the hook name; invalid keys are dropped) and warnings.
func recordResponse(h *hook, a *admission.Attributes, resp *admissionv1.AdmissionResponse) {
	for k, v := range resp.AuditAnnotations {
		_ = a.Record.AddAnnotation(h.Name+"/"+k, v)
	}
	for _, w := range resp.Warnings {
		a.Record.AddWarning(w)
	}
}
