package policies

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
)

// validationFailureKey is the audit annotation listing the failures of
// validations bound with the Audit action.
const validationFailureKey = "validation.policy.admission.k8s.io/validation_failure"

// maxValidationFailures bounds the entries of that annotation.
const maxValidationFailures = 50

// validationFailure is one entry of the validation_failure annotation; the
// field order is upstream's.
type validationFailure struct {
	Message           string                                     `json:"message"`
	Policy            string                                     `json:"policy"`
	Binding           string                                     `json:"binding"`
	ExpressionIndex   int                                        `json:"expressionIndex"`
	ValidationActions []admissionregistrationv1.ValidationAction `json:"validationActions"`
}

// denial is a decision that rejects the request; binding is empty for a
// policy configuration error.
type denial struct {
	policy, binding string
	decision
}

// outcome collects, across a request's policies, what will be denied and
// what will be audited.
type outcome struct {
	denied   []denial
	failures []validationFailure
}

// finish publishes the validation failures and turns the first denial into
// the client's error.
func (d *vapDispatch) finish() error {
	if len(d.failures) > 0 {
		d.publishFailures()
	}
	if len(d.denied) == 0 {
		return nil
	}
	first := d.denied[0]
	var msg string
	if first.binding != "" {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", first.policy, first.binding, first.message)
	} else {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", first.policy, first.message)
	}
	var se *apierrors.StatusError
	if !errors.As(admission.NewForbidden(d.a, errors.New(msg)), &se) {
		return apierrors.NewInternalError(errors.New("failed to create status error"))
	}
	reason := first.reason
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	se.ErrStatus.Reason = reason
	se.ErrStatus.Code = reasonToCode(reason)
	se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{Message: msg})
	return se
}

func (d *vapDispatch) publishFailures() {
	failures := d.failures
	if len(failures) > maxValidationFailures {
		d.o.Logger.Warn("validation failures exceed the audit annotation's limit; truncating",
			"resource", d.a.Resource.String(), "count", len(failures), "limit", maxValidationFailures)
		failures = failures[:maxValidationFailures]
	}
	value, err := json.Marshal(failures)
	if err != nil {
		return
	}
	if err := d.a.Record.AddAnnotation(validationFailureKey, string(value)); err != nil {
		d.o.Logger.Warn("setting the validation failure audit annotation", "err", err)
	}
}

// reasonToCode maps a validation's reason to the response code.
func reasonToCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonUnauthorized:
		return http.StatusUnauthorized
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusUnprocessableEntity
}

// auditCollector gathers one policy's auditAnnotations across its bindings
// and params: distinct values per key, in first-seen order.
type auditCollector struct {
	keys   []string
	values map[string][]string
}

func newAuditCollector() *auditCollector { return &auditCollector{} }

func (c *auditCollector) add(key, value string) {
	if c.values == nil {
		c.values = map[string][]string{}
	}
	vs, seen := c.values[key]
	for _, v := range vs {
		if v == value {
			return
		}
	}
	if !seen {
		c.keys = append(c.keys, key)
	}
	c.values[key] = append(vs, value)
}

// publish adds "<policy>/<key>" annotations; values of a key are joined by
// ", ". A rejected annotation is only logged, as upstream.
func (c *auditCollector) publish(policy string, a *admission.Attributes) {
	for _, k := range c.keys {
		if err := a.Record.AddAnnotation(policy+"/"+k, strings.Join(c.values[k], ", ")); err != nil {
			slog.Warn("setting a policy audit annotation", "policy", policy, "key", k, "err", err)
		}
	}
}
