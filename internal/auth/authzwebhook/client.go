package authzwebhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// maxResponseBytes bounds what is read of an answer.
const maxResponseBytes = 3 << 20

// loadKubeconfig reads the remote authorizer's address and credentials
// from a kubeconfig file: its current context's cluster (server,
// certificate-authority(-data)) and user (client certificate and key, or
// token).
func loadKubeconfig(path string) (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading authorization webhook kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// statusError is a non-2xx answer of the remote authorizer.
type statusError struct {
	code       int
	retryAfter bool
	reason     metav1.StatusReason
	message    string
}

func (e *statusError) Error() string {
	if e.message == "" {
		return fmt.Sprintf("webhook authorizer answered HTTP %d", e.code)
	}
	return fmt.Sprintf("webhook authorizer answered HTTP %d: %s", e.code, e.message)
}

// retryable reports whether err is transient, as upstream's webhooks judge:
// a reset connection, HTTP 429, 500 or 504, or an answer with Retry-After.
func retryable(err error) bool {
	if utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) {
		return true
	}
	var se *statusError
	if !errors.As(err, &se) {
		return false
	}
	switch se.code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusGatewayTimeout:
		return true
	}
	return se.retryAfter
}

// caller posts reviews to the remote authorizer, recording each attempt
// in metrics under name.
type caller struct {
	client     *http.Client
	url        string
	apiVersion string
	backoff    wait.Backoff
	name       string
	metrics    *Metrics
}

// review is the body of a SubjectAccessReview in either version.
type review struct {
	metav1.TypeMeta `json:",inline"`
	Spec            any                                       `json:"spec"`
	Status          authorizationv1.SubjectAccessReviewStatus `json:"status"`
}

// call posts spec, retrying transient failures with c.backoff, and returns
// the answer's status and the result of the last attempt (ResultSuccess,
// ResultError, …; empty when none was made). Its error is the last
// attempt's, when there was one.
func (c *caller) call(ctx context.Context, spec any) (authorizationv1.SubjectAccessReviewStatus, string, error) {
	body, err := json.Marshal(review{
		TypeMeta: metav1.TypeMeta{APIVersion: c.apiVersion, Kind: "SubjectAccessReview"}, Spec: spec})
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, "", err
	}
	var (
		status  authorizationv1.SubjectAccessReviewStatus
		result  string
		lastErr error
	)
	err = wait.ExponentialBackoffWithContext(ctx, c.backoff, func(attemptCtx context.Context) (bool, error) {
		start := time.Now()
		status, lastErr = c.post(attemptCtx, body)
		result = callResult(ctx, lastErr)
		c.metrics.observeCall(c.name, result, time.Since(start))
		if lastErr != nil && retryable(lastErr) {
			return false, nil
		}
		return true, lastErr
	})
	switch {
	case lastErr != nil:
		return status, result, lastErr
	case err != nil:
		return status, result, fmt.Errorf("webhook call failed: %w", err)
	}
	return status, result, nil
}

// post makes one call.
func (c *caller) post(ctx context.Context, body []byte) (authorizationv1.SubjectAccessReviewStatus, error) {
	var none authorizationv1.SubjectAccessReviewStatus
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return none, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return none, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return none, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return none, newStatusError(resp, data)
	}
	var out review
	if err := json.Unmarshal(data, &out); err != nil {
		return none, fmt.Errorf("decoding the webhook authorizer's answer: %w", err)
	}
	return out.Status, nil
}

// newStatusError describes a failed answer, with the message of the
// metav1.Status it carries if any.
func newStatusError(resp *http.Response, data []byte) error {
	se := &statusError{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After") != ""}
	var st metav1.Status
	if json.Unmarshal(data, &st) == nil && st.Kind == "Status" {
		se.message, se.reason = st.Message, st.Reason
	}
	return se
}
