package samplewebhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// answer is what a client saw: a response, or none (aborted).
type answer struct {
	code        int
	contentType string
	body        string
	aborted     bool
}

// call sends one request to h as net/http would, turning an
// http.ErrAbortHandler panic into an aborted answer.
func call(ctx context.Context, h http.Handler, method, path, contentType, body string) (a answer) {
	r := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			a = answer{aborted: true}
		}
	}()
	h.ServeHTTP(w, r)
	return answer{code: w.Code, contentType: w.Header().Get("Content-Type"), body: w.Body.String()}
}

const denyAll = `{"uid":"abc","kind":{"group":"","version":"v1","kind":"ConfigMap"},"operation":"CREATE","userInfo":{}}`

func review(version, request string) string {
	return `{"apiVersion":"admission.k8s.io/` + version + `","kind":"AdmissionReview","request":` + request + `}`
}

func TestEnvelope(t *testing.T) {
	h := NewHandler(Config{delay: 10 * time.Millisecond})
	const text = "text/plain; charset=utf-8"
	denied := func(v string) string {
		return `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/` + v + `","response":{"uid":"abc","allowed":false,"status":{"metadata":{},"message":"this webhook denies all requests"}}}`
	}
	tests := []struct {
		id, method, path, contentType, body string
		want                                answer
		prefixOnly                          bool
	}{
		{"H1 text/plain", "POST", "/always-deny", "text/plain", review("v1", denyAll), answer{code: 200}, false},
		{"H1 missing", "POST", "/always-deny", "", review("v1", denyAll), answer{code: 200}, false},
		{"H1 charset", "POST", "/always-deny", "application/json; charset=utf-8", review("v1", denyAll), answer{code: 200}, false},
		{"H2", "POST", "/always-deny", "application/json", "", answer{400, text, "Request could not be decoded: Object 'Kind' is missing in ''\n", false}, false},
		{"H3", "POST", "/always-deny", "application/json", "{}", answer{400, text, "Request could not be decoded: Object 'Kind' is missing in '{}'\n", false}, false},
		{"H4", "POST", "/always-deny", "application/json", `{"kind":"AdmissionReview"}`,
			answer{400, text, "Request could not be decoded: Object 'apiVersion' is missing in '{\"kind\":\"AdmissionReview\"}'\n", false}, false},
		{"H5", "POST", "/always-deny", "application/json", `{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview"}`,
			answer{400, text, `Request could not be decoded: no kind "AdmissionReview" is registered for version "admission.k8s.io/v2"`, false}, true},
		{"H6", "POST", "/always-deny", "application/json", `{"apiVersion":"v1","kind":"Pod"}`, answer{400, text, "Unsupported group version kind: /v1, Kind=Pod\n", false}, false},
		{"H7", "POST", "/always-deny", "application/json", `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration"}`,
			answer{400, text, "Unsupported group version kind: admissionregistration.k8s.io/v1, Kind=ValidatingWebhookConfiguration\n", false}, false},
		{"H8", "POST", "/pods", "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, answer{aborted: true}, false},
		{"H8 null", "POST", "/always-deny", "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":null}`, answer{aborted: true}, false},
		{"H9", "POST", "/configmaps", "application/json", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}`, answer{aborted: true}, false},
		{"H10", "POST", "/always-deny", "application/json", review("v1", denyAll), answer{200, "application/json", denied("v1"), false}, false},
		{"H11", "POST", "/always-deny", "application/json", review("v1beta1", denyAll), answer{200, "application/json", denied("v1beta1"), false}, false},
		{"H12", "GET", "/always-deny", "application/json", review("v1", denyAll), answer{200, "application/json", denied("v1"), false}, false},
		{"H13", "POST", "/always-deny", "application/json", "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest:\n  uid: abc\n",
			answer{200, "application/json", denied("v1"), false}, false},
		{"H14", "POST", "/always-deny", "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","Request":{"uid":"abc"}}`, answer{aborted: true}, false},
		{"H15", "GET", "/readyz", "", "", answer{200, "text/plain; charset=utf-8", "ok", false}, false},
		{"H16 /nope", "POST", "/nope", "application/json", review("v1", denyAll), answer{404, text, "404 page not found\n", false}, false},
		{"H16 /pods/", "POST", "/pods/", "application/json", review("v1", denyAll), answer{404, text, "404 page not found\n", false}, false},
		{"H16 /Pods", "POST", "/Pods", "application/json", review("v1", denyAll), answer{404, text, "404 page not found\n", false}, false},
		{"H17", "POST", "/pods?timeout=10s", "application/json", review("v1", `{"uid":"abc","resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE","userInfo":{}}`),
			answer{200, "application/json", `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"abc","allowed":true}}`, false}, false},
		{"X1", "POST", "/always-deny", "application/json", review("v1", `{"operation":"CREATE"}`),
			answer{200, "application/json", strings.Replace(denied("v1"), `"abc"`, `""`, 1), false}, false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got := call(context.Background(), h, tt.method, tt.path, tt.contentType, tt.body)
			if tt.prefixOnly && strings.HasPrefix(got.body, tt.want.body) {
				got.body = tt.want.body
			}
			if got != tt.want {
				t.Errorf("%s %s = %+v\nwant %+v", tt.method, tt.path, got, tt.want)
			}
		})
	}
}

// TestEnvelopeDelayedAbort: on the v1 path /always-allow-delay-5s sleeps
// before it fails to answer a review without a request; on v1beta1 it fails
// at once.
func TestEnvelopeDelayedAbort(t *testing.T) {
	const delay = 300 * time.Millisecond
	h := NewHandler(Config{delay: delay})
	for _, tt := range []struct {
		version string
		slow    bool
	}{{"v1", true}, {"v1beta1", false}} {
		start := time.Now()
		got := call(context.Background(), h, "POST", "/always-allow-delay-5s", "application/json",
			`{"apiVersion":"admission.k8s.io/`+tt.version+`","kind":"AdmissionReview"}`)
		took := time.Since(start)
		if !got.aborted || (took >= delay) != tt.slow {
			t.Errorf("%s without a request: %+v after %v, want aborted (after the delay: %v)", tt.version, got, took, tt.slow)
		}
	}
}
