package webhooks

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// callError is a failure to call a webhook or to understand its answer:
// the only failures the webhook's failurePolicy governs. Code is the status
// the failure is counted with in metrics.
type callError struct {
	Webhook string
	Reason  error
	Code    int32
}

func (e *callError) Error() string {
	if e.Reason != nil {
		return fmt.Sprintf("failed calling webhook %q: %v", e.Webhook, e.Reason)
	}
	return fmt.Sprintf("failed calling webhook %q; no further details available", e.Webhook)
}

func (e *callError) Unwrap() error { return e.Reason }

// rejection is a webhook's allowed=false answer, as the client will see it.
type rejection struct {
	Status *apierrors.StatusError
}

func (e *rejection) Error() string { return e.Status.Error() }

// toClientError turns a call failure under failurePolicy Fail into the 500
// the client receives; other errors are returned as they are.
func toClientError(err error) error {
	var ce *callError
	if errors.As(err, &ce) {
		se := apierrors.NewInternalError(ce)
		return se
	}
	var rj *rejection
	if errors.As(err, &rj) {
		return rj.Status
	}
	return err
}

// denialStatus is the Status a denying webhook's response turns into.
func denialStatus(webhook string, st *metav1.Status) *apierrors.StatusError {
	out := metav1.Status{Status: metav1.StatusFailure}
	if st != nil {
		out = *st
	}
	if out.Code < 400 {
		out.Code = http.StatusBadRequest
	}
	if out.Status == "" || out.Status == metav1.StatusSuccess {
		out.Status = metav1.StatusFailure
	}
	switch {
	case out.Message != "":
		out.Message = fmt.Sprintf("admission webhook %q denied the request: %s", webhook, out.Message)
	case out.Reason != "":
		out.Message = fmt.Sprintf("admission webhook %q denied the request: %s", webhook, out.Reason)
	default:
		out.Message = fmt.Sprintf("admission webhook %q denied the request without explanation", webhook)
	}
	return &apierrors.StatusError{ErrStatus: out}
}

// errDryRunUnsupported is upstream's 400 for a dry run reaching a webhook
// with side effects; failurePolicy does not apply.
func errDryRunUnsupported(webhook string) error {
	return apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", webhook))
}

// errTimeout is the 504 when the API request's own deadline has passed.
func errTimeout() error {
	return apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
}
