package webhook

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const podRequest = `{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},` +
	`"resource":{"group":"","version":"v1","resource":"pods"},"name":"p","namespace":"ns",` +
	`"operation":"CREATE","userInfo":{"username":"alice"},` +
	`"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"i"}]}}}`

func reviewBody(version, request string) string {
	return `{"apiVersion":"` + version + `","kind":"AdmissionReview","request":` + request + `}`
}

func post(h http.Handler, path, contentType, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestHandlerAnswers(t *testing.T) {
	addLabel := func(_ context.Context, req Request) Response {
		var pod corev1.Pod
		if err := req.DecodeObject(&pod); err != nil {
			return Errored(http.StatusBadRequest, err)
		}
		modified := pod.DeepCopy()
		metav1.SetMetaDataLabel(&modified.ObjectMeta, "a", "b")
		return Patched(&pod, modified)
	}
	tests := []struct {
		name    string
		request string
		handle  HandlerFunc
		want    string // the response object
	}{
		{"allowed", podRequest, func(context.Context, Request) Response { return Allowed("") },
			`{"uid":"u-1","allowed":true}`},
		{"allowed with message", podRequest, func(context.Context, Request) Response { return Allowed("fine") },
			`{"uid":"u-1","allowed":true,"status":{"metadata":{},"message":"fine"}}`},
		{"denied", podRequest, func(context.Context, Request) Response { return Denied("no") },
			`{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"no"}}`},
		{"denied with reason only", podRequest, func(context.Context, Request) Response { return DeniedWithCode(0, "bad data", "") },
			`{"uid":"u-1","allowed":false,"status":{"metadata":{},"reason":"bad data"}}`},
		{"denied with code", podRequest, func(context.Context, Request) Response {
			return DeniedWithCode(http.StatusForbidden, metav1.StatusReasonForbidden, "not you")
		}, `{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"not you","reason":"Forbidden","code":403}}`},
		{"errored", podRequest, func(context.Context, Request) Response { return Errored(500, errors.New("boom")) },
			`{"uid":"u-1","allowed":false,"status":{"metadata":{},"status":"Failure","message":"boom","code":500}}`},
		{"patched from diff", podRequest, addLabel,
			`{"uid":"u-1","allowed":true,"patch":"` + b64(`[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]`) + `","patchType":"JSONPatch"}`},
		{"patched, nothing changed", podRequest, func(_ context.Context, req Request) Response {
			return Patched(req.Object.Raw, req.Object.Raw)
		}, `{"uid":"u-1","allowed":true}`},
		{"warnings and audit annotations", podRequest, func(context.Context, Request) Response {
			return Denied("no").WithWarnings("w1").WithWarnings("w2").WithAuditAnnotation("k", "v")
		}, `{"uid":"u-1","allowed":false,"status":{"metadata":{},"message":"no"},"auditAnnotations":{"k":"v"},"warnings":["w1","w2"]}`},
		{"uid copied even if the handler sets another", podRequest, func(context.Context, Request) Response {
			r := Allowed("")
			r.UID = "other"
			return r
		}, `{"uid":"u-1","allowed":true}`},
		{"no uid", `{"operation":"DELETE"}`, func(_ context.Context, req Request) Response {
			if err := req.DecodeObject(&corev1.Pod{}); !errors.Is(err, ErrNoObject) {
				return Denied(fmt.Sprint("DecodeObject without an object = ", err))
			}
			return Allowed(string(req.Operation))
		}, `{"uid":"","allowed":true,"status":{"metadata":{},"message":"DELETE"}}`},
		{"request fields", podRequest, func(_ context.Context, req Request) Response {
			return Allowed(req.Kind.Kind + " " + req.Resource.Resource + " " + req.Namespace + "/" + req.Name + " " + req.UserInfo.Username)
		}, `{"uid":"u-1","allowed":true,"status":{"metadata":{},"message":"Pod pods ns/p alice"}}`},
	}
	for _, version := range []string{versionV1, versionV1beta1} {
		for _, tt := range tests {
			t.Run(version+"/"+tt.name, func(t *testing.T) {
				w := post(Serve(tt.handle), "/hook", "application/json", reviewBody(version, tt.request))
				want := `{"kind":"AdmissionReview","apiVersion":"` + version + `","response":` + tt.want + `}`
				if w.Code != http.StatusOK || w.Body.String() != want {
					t.Errorf("answer = %d %s\nwant 200 %s", w.Code, w.Body, want)
				}
				if ct := w.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q, want application/json", ct)
				}
			})
		}
	}
}

func TestHandlerRejects(t *testing.T) {
	allow := HandlerFunc(func(context.Context, Request) Response { return Allowed("") })
	tests := []struct {
		name, contentType, body string
		wantCode                int
		wantBody                string
	}{
		{"text content type", "text/plain", reviewBody(versionV1, podRequest), 415, "Content-Type \"text/plain\" is not application/json\n"},
		{"no content type", "", reviewBody(versionV1, podRequest), 415, "Content-Type \"\" is not application/json\n"},
		{"empty body", "application/json", "", 400, "Request could not be decoded: Object 'Kind' is missing in ''\n"},
		{"no kind", "application/json", `{}`, 400, "Request could not be decoded: Object 'Kind' is missing in '{}'\n"},
		{"unknown version", "application/json", `{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview"}`, 400,
			"Request could not be decoded: no kind \"AdmissionReview\" is registered for version \"admission.k8s.io/v2\""},
		{"not a review", "application/json", `{"apiVersion":"v1","kind":"Pod"}`, 400, "Unsupported group version kind: /v1, Kind=Pod\n"},
		{"no request", "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, 400, "AdmissionReview has no request\n"},
		{"too large", "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"` +
			strings.Repeat("x", 2000) + `"}}`, 413, "request body is larger than 1024 bytes\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHTTPHandler(allow, Options{MaxRequestBytes: 1024})
			w := post(h, "/hook", tt.contentType, tt.body)
			if w.Code != tt.wantCode || !strings.HasPrefix(w.Body.String(), tt.wantBody) {
				t.Errorf("answer = %d %q, want %d %q", w.Code, w.Body, tt.wantCode, tt.wantBody)
			}
		})
	}
	// The size bound also holds when the length is not announced.
	h := NewHTTPHandler(allow, Options{MaxRequestBytes: 1024})
	r := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(strings.Repeat(" ", 2000)))
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = -1
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("unannounced large body: code = %d, want 413", w.Code)
	}
}

func TestHandlerPanics(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := NewHTTPHandler(HandlerFunc(func(context.Context, Request) Response { panic("oops") }), Options{Registerer: reg, Path: "/p"})
	for _, version := range []string{versionV1, versionV1beta1} {
		w := post(h, "/p", "application/json", reviewBody(version, podRequest))
		want := `{"kind":"AdmissionReview","apiVersion":"` + version + `","response":{"uid":"u-1","allowed":false,` +
			`"status":{"metadata":{},"status":"Failure","message":"webhook handler panicked: oops","code":500}}}`
		if w.Code != http.StatusInternalServerError || w.Body.String() != want {
			t.Errorf("%s: answer = %d %s, want 500 %s", version, w.Code, w.Body, want)
		}
	}
	if got := metricValue(t, reg, "admitd_webhook_requests_total", "/p", resultPanic); got != 2 {
		t.Errorf("requests{result=panic} = %v, want 2", got)
	}

	abort := NewHTTPHandler(HandlerFunc(func(context.Context, Request) Response { panic(http.ErrAbortHandler) }), Options{Registerer: reg, Path: "/a"})
	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Errorf("panic(http.ErrAbortHandler) in the handler: recovered %v, want it passed on", v)
			}
		}()
		post(abort, "/a", "application/json", reviewBody(versionV1, podRequest))
	}()
	if got := metricValue(t, reg, "admitd_webhook_requests_total", "/a", resultAborted); got != 1 {
		t.Errorf("requests{result=aborted} = %v, want 1", got)
	}
}

func TestHandlerMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	mux := http.NewServeMux()
	// Two handlers share the registerer; the path label is the mux pattern.
	mux.Handle("/allow", NewHTTPHandler(HandlerFunc(func(context.Context, Request) Response { return Allowed("") }), Options{Registerer: reg}))
	mux.Handle("/deny", NewHTTPHandler(HandlerFunc(func(context.Context, Request) Response { return Denied("no") }), Options{Registerer: reg}))
	for range 3 {
		post(mux, "/allow", "application/json", reviewBody(versionV1, podRequest))
	}
	post(mux, "/deny", "application/json", reviewBody(versionV1beta1, podRequest))
	post(mux, "/deny", "text/plain", "")
	for _, tt := range []struct {
		path, result string
		want         float64
	}{{"/allow", resultAllowed, 3}, {"/deny", resultDenied, 1}, {"/deny", resultInvalid, 1}} {
		if got := metricValue(t, reg, "admitd_webhook_requests_total", tt.path, tt.result); got != tt.want {
			t.Errorf("requests{path=%s,result=%s} = %v, want %v", tt.path, tt.result, got, tt.want)
		}
	}
	if got := metricValue(t, reg, "admitd_webhook_request_duration_seconds", "/deny", resultDenied); got != 1 {
		t.Errorf("latency{path=/deny,result=denied} count = %v, want 1", got)
	}
	if got := metricValue(t, reg, "admitd_webhook_requests_in_flight", "/allow", ""); got != 0 {
		t.Errorf("in flight{path=/allow} = %v, want 0", got)
	}
}

// metricValue returns the value (a histogram's count) of the series of name
// with labels path and, unless empty, result; -1 if there is none.
func metricValue(t *testing.T, reg *prometheus.Registry, name, path, result string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["path"] != path || (result != "" && labels["result"] != result) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return -1
}
