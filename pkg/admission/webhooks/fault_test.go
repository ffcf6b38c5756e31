package webhooks_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// faultCase is one way a webhook call can fail. Each runs through both
// plugins under failurePolicy Fail and Ignore, on its own server.
type faultCase struct {
	name string
	// hook adjusts the webhook (default: fault.example.com, service
	// webhook-test/default path /fault, v1, the right caBundle).
	hook func(h *hook)
	// serve scripts /fault for the failing call; nil for configuration
	// faults, where the server is never reached.
	serve func(done chan struct{}) behaviour
	// reason is what follows `failed calling webhook "fault.example.com": `;
	// UID stands for the uid of the request sent. With reasonRE it is a
	// regular expression.
	reason   string
	reasonRE bool
	// code is the rejection_code counted under Fail.
	code string
	// parent bounds the API request's own context.
	parent time.Duration
	// waitDone: the handler must see the client hang up.
	waitDone bool
}

const faultHook = "fault.example.com"

var faultCases = []faultCase{
	{
		name: "timeout", hook: func(h *hook) { h.timeout = ptr(int32(1)) },
		serve:  func(done chan struct{}) behaviour { return stall(5*time.Second, done) },
		reason: `failed to call webhook: Post "https://webhook-test.default.svc:443/fault?timeout=1s": context deadline exceeded`,
		code:   "503", waitDone: true,
	},
	{
		// Spec 5.5: the effective limit is min(timeoutSeconds, time left in
		// the API request); the query carries it rounded up.
		name: "parent deadline", parent: 900 * time.Millisecond,
		serve:  func(done chan struct{}) behaviour { return stall(5*time.Second, done) },
		reason: `failed to call webhook: Post "https://webhook-test.default.svc:443/fault?timeout=1s": context deadline exceeded`,
		code:   "503", waitDone: true,
	},
	{
		name: "slow drip", hook: func(h *hook) { h.timeout = ptr(int32(1)) },
		serve: func(done chan struct{}) behaviour { return drip(200*time.Millisecond, done) },
		// client-go's transformResponse wraps body read errors.
		reason: `failed to call webhook: unexpected error when reading response body. Please retry. Original error: context deadline exceeded`,
		code:   "503", waitDone: true,
	},
	{
		name: "HTTP 500 text body",
		serve: func(chan struct{}) behaviour {
			return rawReply(500, "text/plain; charset=utf-8", "webhook internal server error\n")
		},
		reason: `failed to call webhook: an error on the server ("webhook internal server error") has prevented the request from succeeding`,
		code:   "500",
	},
	{
		name: "HTTP 500 Status body",
		serve: func(chan struct{}) behaviour {
			return rawReply(500, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"boom","code":500}`)
		},
		reason: `failed to call webhook: boom`, code: "500",
	},
	{
		// client-go decodes an error body as a Status only when it names
		// its kind; otherwise the generic message, "unknown" for a
		// non-text content type.
		name: "HTTP 500 Status body without kind",
		serve: func(chan struct{}) behaviour {
			return rawReply(500, "application/json", `{"status":"Failure","message":"boom","code":500}`)
		},
		reason: `failed to call webhook: an error on the server ("unknown") has prevented the request from succeeding`, code: "500",
	},
	{
		name: "HTTP 403 Status body",
		serve: func(chan struct{}) behaviour {
			return rawReply(403, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"forbidden-by-wh","code":403}`)
		},
		reason: `failed to call webhook: forbidden-by-wh`, code: "403",
	},
	{
		name: "HTTP 404",
		serve: func(chan struct{}) behaviour {
			return rawReply(404, "text/plain; charset=utf-8", "404 page not found\n")
		},
		reason: `failed to call webhook: the server could not find the requested resource`, code: "404",
	},
	{
		name: "malformed JSON body",
		serve: func(chan struct{}) behaviour {
			return rawReply(200, "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{`)
		},
		reason: `failed to call webhook: couldn't get version/kind; json parse error: unexpected end of JSON input`, code: "503",
	},
	{
		name:   "empty body",
		serve:  func(chan struct{}) behaviour { return rawReply(200, "application/json", "") },
		reason: `failed to call webhook: 0-length response with status code: 200 and content type: application/json`, code: "503",
	},
	{
		name: "v1beta1 body for a v1 request",
		serve: func(chan struct{}) behaviour {
			return func(w http.ResponseWriter, _ *http.Request, in *reviewIn) {
				writeJSON(w, 200, map[string]any{"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview",
					"response": map[string]any{"uid": in.Request.UID, "allowed": true}})
			}
		},
		reason: `failed to call webhook: converting (v1beta1.AdmissionReview) to (v1.AdmissionReview): unknown conversion`, code: "503",
	},
	{
		name:   "response absent",
		serve:  func(chan struct{}) behaviour { return rawReply(200, "application/json", `{}`) },
		reason: `received invalid webhook response: webhook response was absent`, code: "503",
	},
	{
		name: "wrong uid",
		serve: func(chan struct{}) behaviour {
			return func(w http.ResponseWriter, _ *http.Request, in *reviewIn) {
				respond(w, in, admissionv1.AdmissionResponse{UID: "nope", Allowed: true})
			}
		},
		reason: `received invalid webhook response: expected response.uid="UID", got "nope"`, code: "503",
	},
	{
		name:   "TLS name mismatch",
		hook:   func(h *hook) { h.service = "wrong-name" },
		serve:  func(chan struct{}) behaviour { return allow },
		reason: `failed to call webhook: Post "https://wrong-name.default.svc:443/fault?timeout=10s": tls: failed to verify certificate: x509: certificate is valid for webhook-test.default.svc, localhost, not wrong-name.default.svc`,
		code:   "503",
	},
	{
		name:   "unknown CA (no caBundle)",
		hook:   func(h *hook) { h.noCA = true },
		serve:  func(chan struct{}) behaviour { return allow },
		reason: `failed to call webhook: Post "https://webhook-test.default.svc:443/fault?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
		code:   "503",
	},
	{
		name:   "caBundle of another CA",
		hook:   func(h *hook) { h.otherCA = true },
		serve:  func(chan struct{}) behaviour { return allow },
		reason: `failed to call webhook: Post "https://webhook-test.default.svc:443/fault?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
		code:   "503",
	},
	{
		name:     "connection reset",
		serve:    func(chan struct{}) behaviour { return hijack("", true) },
		reason:   `failed to call webhook: Post "https://webhook-test\.default\.svc:443/fault\?timeout=10s": read tcp 127\.0\.0\.1:\d+->127\.0\.0\.1:\d+: read: connection reset by peer`,
		reasonRE: true, code: "503",
	},
	{
		name:   "connection closed",
		serve:  func(chan struct{}) behaviour { return hijack("", false) },
		reason: `failed to call webhook: Post "https://webhook-test.default.svc:443/fault?timeout=10s": EOF`,
		code:   "503",
	},
	{
		// upstream's nonStatusError endpoint
		name:   "not HTTP",
		serve:  func(chan struct{}) behaviour { return hijack("bad-http", false) },
		reason: `failed to call webhook: Post "https://webhook-test.default.svc:443/fault?timeout=10s": net/http: HTTP/1.x transport connection broken: malformed HTTP response "bad-http"`,
		code:   "503",
	},
	{
		name:   "no known AdmissionReview version",
		hook:   func(h *hook) { h.versions = []string{"v2", "v1alpha1"} },
		reason: `could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)`,
		code:   "400",
	},
	{
		name:   "unparsable caBundle",
		hook:   func(h *hook) { h.badCA = true },
		reason: `could not get REST client: unable to load root certificates: unable to parse bytes as PEM block`,
		code:   "500",
	},
	{
		// Upstream's client manager reports this as an ErrCallingWebhook of
		// its own, nested in the "could not get REST client" failure.
		name:   "empty clientConfig",
		hook:   func(h *hook) { h.emptyClient = true },
		reason: `could not get REST client: failed calling webhook "fault.example.com": webhook configuration must have either service or URL`,
		code:   "500",
	},
}

// TestFaults runs every fault through both plugins under Fail and Ignore,
// checks what the client sees, the annotations and the metrics, then checks
// that the plugin still admits a good request through the same client.
func TestFaults(t *testing.T) {
	for _, fc := range faultCases {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			for _, k := range []kind{mutating, validating} {
				for _, policy := range []admissionregistrationv1.FailurePolicyType{admissionregistrationv1.Fail, admissionregistrationv1.Ignore} {
					t.Run(string(k)+"/"+string(policy), func(t *testing.T) {
						t.Parallel()
						runFault(t, fc, k, policy)
					})
				}
			}
		})
	}
}

func runFault(t *testing.T, fc faultCase, k kind, policy admissionregistrationv1.FailurePolicyType) {
	s := newWebhookServer(t, false)
	p := newPlugins(t, s.addr())
	h := hook{name: faultHook, path: "/fault", failurePolicy: &policy}
	if fc.hook != nil {
		fc.hook(&h)
	}
	p.configure(k, s, h)
	done := make(chan struct{})
	if fc.serve != nil {
		s.handle("/fault", fc.serve(done))
	}

	ctx := context.Background()
	if fc.parent > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, fc.parent)
		defer cancel()
	}
	a := cmUpdate(nil)
	err := p.run(ctx, k, a)

	typ := map[kind]string{mutating: "admit", validating: "validating"}[k]
	want := map[string]string{}
	if k == mutating {
		key, v := mutationAnnotation(0, 0, faultHook, false)
		want[key] = v
	}
	failOpen := 0.0
	switch {
	case policy == admissionregistrationv1.Fail:
		cause := `failed calling webhook "fault.example.com": ` + fc.reason
		if fc.reasonRE {
			wantInternalRE(t, err, cause)
		} else {
			if calls := s.callsTo("/fault"); len(calls) > 0 {
				cause = strings.Replace(cause, "UID", string(calls[0].Review.Request.UID), 1)
			}
			wantInternal(t, err, cause)
		}
		if got := p.metric(t, "apiserver_admission_webhook_rejection_count", map[string]string{"name": faultHook, "type": typ,
			"operation": "UPDATE", "error_type": "calling_webhook_error", "rejection_code": fc.code}); got != 1 {
			t.Errorf("rejection_count{rejection_code=%q} = %v, want 1", fc.code, got)
		}
	case fc.parent > 0 && k == mutating:
		// Spec 5.5: an ignored failure after the API request's own
		// deadline stops the mutating loop with a 504.
		wantStatus(t, err, 504, metav1.StatusReasonTimeout, "Timeout: request did not complete within requested timeout")
		want["failed-open.mutation.webhook.admission.k8s.io/round_0_index_0"] = faultHook
		failOpen = 1
	default:
		if err != nil {
			t.Fatalf("%s with failurePolicy Ignore: error %v, want admitted", k, err)
		}
		key := map[kind]string{mutating: "failed-open.mutation", validating: "failed-open.validating"}[k] +
			".webhook.admission.k8s.io/round_0_index_0"
		want[key] = faultHook
		failOpen = 1
	}
	wantAnnotations(t, a, want)
	if got := p.metric(t, "apiserver_admission_webhook_fail_open_count", map[string]string{"name": faultHook, "type": typ}); got != failOpen {
		t.Errorf("fail_open_count = %v, want %v", got, failOpen)
	}
	if fc.waitDone {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("the webhook never saw the client give up")
		}
	}

	// The plugin stays healthy: the same endpoint, once it behaves, admits.
	// The good configuration has the same client configuration as the
	// failing one unless that was the fault, so the same client (and
	// connection pool) serves it.
	s.handle("/fault", allow)
	p.configure(k, s, hook{name: faultHook, path: "/fault", failurePolicy: &policy})
	good := cmUpdate(nil)
	if err := p.run(context.Background(), k, good); err != nil {
		t.Fatalf("good request after the fault: %v", err)
	}
	if got := annotations(good)[faultHook+"/key1"]; got != "value1" {
		t.Fatalf("good request after the fault: annotation %s/key1 = %q, want value1", faultHook, got)
	}
}

func wantInternalRE(t testing.TB, err error, causeRE string) {
	t.Helper()
	se := wantStatus(t, err, 500, metav1.StatusReasonInternalError, errMessage(err))
	re := regexp.MustCompile("^" + causeRE + "$")
	if !re.MatchString(strings.TrimPrefix(se.ErrStatus.Message, "Internal error occurred: ")) ||
		!strings.HasPrefix(se.ErrStatus.Message, "Internal error occurred: ") {
		t.Fatalf("message = %q, want Internal error occurred: %s", se.ErrStatus.Message, causeRE)
	}
	if d := se.ErrStatus.Details; d == nil || len(d.Causes) != 1 || !re.MatchString(d.Causes[0].Message) {
		t.Fatalf("details = %+v, want one cause matching %s", d, causeRE)
	}
}

func errMessage(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestFaultLargeResponse: upstream reads a webhook's answer fully, with no
// size limit (io.ReadAll in k8s.io/client-go/rest/request.go); so does admitd. A 16 MiB answer (padding in an
// unknown field, which decoding ignores) is accepted under both policies.
func TestFaultLargeResponse(t *testing.T) {
	s := newWebhookServer(t, false)
	pad := strings.Repeat("x", 16<<20)
	s.handle("/big", func(w http.ResponseWriter, _ *http.Request, in *reviewIn) {
		writeJSON(w, 200, map[string]any{"apiVersion": in.APIVersion, "kind": "AdmissionReview", "padding": pad,
			"response": map[string]any{"uid": in.Request.UID, "allowed": true, "auditAnnotations": map[string]string{"key1": "value1"}}})
	})
	for _, k := range []kind{mutating, validating} {
		for _, policy := range []*admissionregistrationv1.FailurePolicyType{fail, ignore} {
			p := newPlugins(t, s.addr())
			p.configure(k, s, hook{name: "big.example.com", path: "/big", failurePolicy: policy})
			a := cmUpdate(nil)
			if err := p.run(context.Background(), k, a); err != nil {
				t.Fatalf("%s %s: %v", k, *policy, err)
			}
			if got := annotations(a)["big.example.com/key1"]; got != "value1" {
				t.Fatalf("%s %s: big.example.com/key1 = %q, want value1", k, *policy, got)
			}
		}
	}
}

// TestFaultRetryAfter: upstream's REST client (k8s.io/client-go/rest/request.go
// and with_retry.go) retries a call answered with 429 or >= 500 carrying
// Retry-After (up to 10 times, within the call timeout); other failures are
// not retried.
func TestFaultRetryAfter(t *testing.T) {
	s := newWebhookServer(t, false)
	var n atomic.Int64
	s.handle("/busy", func(w http.ResponseWriter, r *http.Request, in *reviewIn) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		allow(w, r, in)
	})
	s.handle("/broken", rawReply(500, "text/plain", "no"))
	for _, k := range []kind{mutating, validating} {
		n.Store(0)
		p := newPlugins(t, s.addr())
		p.configure(k, s, hook{name: "busy.example.com", path: "/busy", failurePolicy: fail})
		a := cmUpdate(nil)
		if err := p.run(context.Background(), k, a); err != nil {
			t.Errorf("%s: 503 with Retry-After then allow: %v, want admitted after a retry", k, err)
		}
		if got := n.Load(); got != 2 {
			t.Errorf("%s: webhook called %d times, want 2", k, got)
		}
		before := len(s.callsTo("/broken"))
		p.configure(k, s, hook{name: "broken.example.com", path: "/broken", failurePolicy: fail})
		_ = p.run(context.Background(), k, cmUpdate(nil))
		if got := len(s.callsTo("/broken")) - before; got != 1 {
			t.Errorf("%s: 500 without Retry-After called %d times, want 1 (no retry)", k, got)
		}
	}
}
