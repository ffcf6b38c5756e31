package webhook

// FuzzServeReview sends any body, as application/json, to the handler
// NewHTTPHandler returns. Its corpus is in testdata/fuzz/FuzzServeReview.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/pkg/yamlbound"
)

// Any body is answered 200 with a review of the request's version and uid,
// or 400 in text; never a 500, which would be a panic while decoding (the
// handler decodes both objects, typed and unstructured); and the objects
// decoded are in proportion to the body, or within yamlbound's limit.
func FuzzServeReview(f *testing.F) {
	const pod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`
	for _, seed := range []string{
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":` + pod + `}}`,
		`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u","operation":"UPDATE","object":` + pod + `,"oldObject":{"kind":"ConfigMap","apiVersion":"v1"}}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, `{"apiVersion":"v1","kind":"Pod"}`, `{"kind":"AdmissionReview"}`, ``, `null`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"\xff","object":{"kind":"Pod","apiVersion":"v1","spec":{"priority":1e999}}}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"object":` + strings.Repeat("[", 10000) + `}}`,
		"apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest:\n  uid: u\n  object: {apiVersion: v1, kind: Pod}\n",
		"apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest:\n  uid: u\n  object:\n    kind: Pod\n    metadata: {labels: {a: &a x, b: *a}}\n",
		"k8s\x00", "k8s\x00\x0a\x26\x0a\x13admission.k8s.io/v1\x12\x0fAdmissionReview\x12\x04\x0a\x02\x0a\x00",
	} {
		f.Add([]byte(seed))
	}
	h := NewHTTPHandler(HandlerFunc(func(_ context.Context, req Request) Response {
		var p corev1.Pod
		var u unstructured.Unstructured
		_, _, _, _ = req.DecodeObject(&p), req.DecodeObject(&u), req.DecodeOldObject(&p), req.DecodeOldObject(&u)
		return Allowed("")
	}), Options{})
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch w.Code {
		case http.StatusOK:
			req, version, err := decodeReview(body)
			if err != nil {
				t.Fatalf("%q answered 200, but decodeReview fails: %v", body, err)
			}
			var out struct {
				APIVersion, Kind string
				Response         *struct{ UID types.UID }
			}
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || out.APIVersion != version || out.Kind != "AdmissionReview" || out.Response == nil || out.Response.UID != req.UID {
				t.Fatalf("%q answered %s (%v), want a %s AdmissionReview for uid %q", body, w.Body, err, version, req.UID)
			}
			if n := len(req.Object.Raw) + len(req.OldObject.Raw); n > 32*len(body)+16<<10+yamlbound.MinLimit {
				t.Fatalf("%.200q: %d bytes in, %d bytes of objects decoded", body, len(body), n)
			}
		case http.StatusBadRequest:
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Fatalf("%q answered 400 as %q, want text", body, ct)
			}
		default:
			t.Fatalf("%q answered %d %s", body, w.Code, w.Body)
		}
	})
}
