package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkServeHTTP_Allowed is the SDK's overhead per review: read,
// decode, call a handler that decides without looking, encode, with metrics.
func BenchmarkServeHTTP_Allowed(b *testing.B) {
	h := NewHTTPHandler(HandlerFunc(func(context.Context, Request) Response { return Allowed("") }),
		Options{Registerer: prometheus.NewRegistry(), Path: "/allow"})
	benchmarkServe(b, h)
}

// BenchmarkServeHTTP_DecodeAndPatch adds a typed decode of the pod and a
// patch computed from the difference.
func BenchmarkServeHTTP_DecodeAndPatch(b *testing.B) {
	h := NewHTTPHandler(HandlerFunc(func(_ context.Context, req Request) Response {
		var pod corev1.Pod
		if err := req.DecodeObject(&pod); err != nil {
			return Errored(http.StatusBadRequest, err)
		}
		modified := pod.DeepCopy()
		metav1.SetMetaDataLabel(&modified.ObjectMeta, "seen", "true")
		return Patched(&pod, modified)
	}), Options{Registerer: prometheus.NewRegistry(), Path: "/patch"})
	benchmarkServe(b, h)
}

func benchmarkServe(b *testing.B, h http.Handler) {
	body := reviewBody(versionV1, podRequest)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("answer %d %s", w.Code, w.Body)
		}
	}
}

func BenchmarkCreatePatch(b *testing.B) {
	a := []byte(`{"metadata":{"name":"p","labels":{"app":"web"},"annotations":{"a/b":"1"}},` +
		`"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}]}]}}`)
	m := []byte(`{"metadata":{"name":"p","labels":{"app":"web","seen":"true"},"annotations":{"a/b":"2"}},` +
		`"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}]},{"name":"sidecar","image":"pause"}]}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CreatePatch(a, m); err != nil {
			b.Fatal(err)
		}
	}
}
