package webhooks

import (
	"bytes"
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/pkg/admission"
)

// TestEncodeReviewMatchesEncodingJSON checks the hand-written review
// encoder against encoding/json on the envelope, byte for byte.
func TestEncodeReviewMatchesEncodingJSON(t *testing.T) {
	odd := []string{"", "plain", `quo"te`, `back\slash`, "<script>&amp;", "tab\tnew\nline\x01", "ünïcødé", "bad\xffutf8",
		"sep\u2028\u2029", "emoji 🎉", "\x7f"}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", Labels: map[string]string{"a": "<b>"}},
		Data:       map[string]string{"k": "v\u2028&"}}
	var nilCM *corev1.ConfigMap
	objects := []runtime.Object{nil, cm, nilCM}
	options := []runtime.Object{nil, &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}},
		&metav1.UpdateOptions{DryRun: []string{"All"}, FieldManager: "m<&>"}, nilCM}
	users := []authenticationv1.UserInfo{{}, {Username: "admin", Groups: []string{"system:masters", "system:authenticated"}},
		{UID: "u-1"}, {Groups: []string{}}, {Username: "x", Extra: map[string]authenticationv1.ExtraValue{"z": {"1"}, "a&": {"<"}}},
		{Extra: map[string]authenticationv1.ExtraValue{}},
		// an x509 user as the authenticator gives it, and extra values nil, empty, many, odd
		{Username: "admin", Groups: []string{"system:masters"}, Extra: map[string]authenticationv1.ExtraValue{
			"authentication.kubernetes.io/credential-id": {"X509SHA256=ab12"}}},
		{UID: "u", Extra: map[string]authenticationv1.ExtraValue{"b": nil, "a": {}, "Z": {"1", "", "<&>"}, "é": {"\u2028"}, "a\x00": {"bad\xff"}}}}
	n := 0
	for i, s := range odd {
		for j, obj := range objects {
			for k, opts := range options {
				for l, u := range users {
					if (i+j+k+l)%3 != 0 && i > 1 {
						continue // enough combinations without the full product
					}
					dry := i%2 == 0
					a := &admission.Attributes{Name: s, Namespace: odd[(i+1)%len(odd)], Subresource: odd[(i+2)%len(odd)],
						Resource:  schema.GroupVersionResource{Group: s, Version: "v1", Resource: "configmaps"},
						Kind:      schema.GroupVersionKind{Group: "", Version: s, Kind: "ConfigMap"},
						Operation: admission.Operation(odd[(i+3)%len(odd)]), UserInfo: u, DryRun: dry, Options: opts}
					inv := &invocation{Resource: a.Resource, Subresource: odd[(i+4)%len(odd)], Kind: a.Kind, Object: obj, OldObject: objects[(j+1)%len(objects)]}
					req, err := newRequest(a, inv, types.UID("uid-"+s))
					if err != nil {
						t.Fatal(err)
					}
					compareEncodings(t, "admission.k8s.io/"+s, req)
					n++
				}
			}
		}
	}
	compareEncodings(t, "admission.k8s.io/v1", nil)
	compareEncodings(t, "admission.k8s.io/v1", &admissionv1.AdmissionRequest{})
	t.Logf("%d requests compared", n)
}

func compareEncodings(t *testing.T, apiVersion string, req *admissionv1.AdmissionRequest) {
	t.Helper()
	want, werr := json.Marshal(reviewEnvelope{Kind: "AdmissionReview", APIVersion: apiVersion, Request: req})
	got, gerr := encodeReview(apiVersion, req)
	if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("encodings differ:\n got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
	}
}

// failingOptions fails to encode, so the review falls back to
// encoding/json, whose error must come through unchanged.
type failingOptions struct{ metav1.CreateOptions }

func (failingOptions) MarshalJSON() ([]byte, error) { return nil, errFailingOptions }

var errFailingOptions = json.Unmarshal([]byte("{"), new(any))

func TestEncodeReviewErrorsAsEncodingJSON(t *testing.T) {
	req := &admissionv1.AdmissionRequest{UID: "u", Options: runtime.RawExtension{Object: &failingOptions{}}}
	_, werr := json.Marshal(reviewEnvelope{Kind: "AdmissionReview", APIVersion: "admission.k8s.io/v1", Request: req})
	_, gerr := encodeReview("admission.k8s.io/v1", req)
	if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
		t.Fatalf("errors differ: got %v, want %v", gerr, werr)
	}
}

// BenchmarkEncodeReview_X509User encodes the review of a ConfigMap create
// by a user authenticated by client certificate, whose extra holds the
// credential id (as every x509 user's does).
func BenchmarkEncodeReview_X509User(b *testing.B) {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}, Data: map[string]string{"k": "v"}}
	a := &admission.Attributes{Name: "cm", Namespace: "ns", Operation: admission.Create,
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind:     schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		UserInfo: authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters", "system:authenticated"},
			Extra: map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/credential-id": {"X509SHA256=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}}},
		Options: &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}}}
	inv := &invocation{Resource: a.Resource, Kind: a.Kind, Object: cm}
	b.ReportAllocs()
	for b.Loop() {
		req, err := newRequest(a, inv, "uid-1")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := encodeReview("admission.k8s.io/v1", req); err != nil {
			b.Fatal(err)
		}
		inv.objectJSON = nil
	}
}

// TestReviewSizeHintCoversOrdinaryReviews: the buffer encodeReview starts
// with holds the whole review of an ordinary create or update (an x509
// admin, a ConfigMap, its options), so it is written without growing.
func TestReviewSizeHintCoversOrdinaryReviews(t *testing.T) {
	data := map[string]string{}
	for _, k := range []string{"a", "bb", "ccc"} {
		data[k] = string(bytes.Repeat([]byte(k), 300))
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "load-12345", Namespace: "loadgen", Labels: map[string]string{"app": "loadgen"}}, Data: data}
	users := []authenticationv1.UserInfo{{Username: "admin", Groups: []string{"system:masters", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/credential-id": {"X509SHA256=" + string(bytes.Repeat([]byte("ab"), 32))}}},
		{Username: "system:serviceaccount:kube-system:replicaset-controller", UID: "0b3c7a54-5d6e-4f0a-9b1c-2d3e4f5a6b7c",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"},
			Extra: map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/node-name": {"node-1"},
				"authentication.kubernetes.io/pod-name": {"kube-controller-manager-node-1"}, "authentication.kubernetes.io/pod-uid": {"9f8e7d6c-5b4a-3210-fedc-ba9876543210"},
				"authentication.kubernetes.io/credential-id": {"JTI=4c5d6e7f-8091-a2b3-c4d5-e6f708192a3b"}}}}
	ops := []struct {
		op       admission.Operation
		old      runtime.Object
		options  runtime.Object
		resource string
	}{
		{admission.Create, nil, &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}, FieldManager: "loadgen"}, "configmaps"},
		{admission.Update, cm, &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}, FieldManager: "kubectl-client-side-apply"}, "configmaps"},
	}
	for _, u := range users {
		for _, o := range ops {
			a := &admission.Attributes{Name: cm.Name, Namespace: cm.Namespace, Operation: o.op, UserInfo: u, Options: o.options,
				Resource: schema.GroupVersionResource{Version: "v1", Resource: o.resource}, Kind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}
			inv := &invocation{Resource: a.Resource, Kind: a.Kind, Object: cm, OldObject: o.old}
			req, err := newRequest(a, inv, types.UID("6b1c1c39-3b0f-4f7e-8a39-9a3a3ef1e7b2"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeReview("admission.k8s.io/v1", req)
			if err != nil {
				t.Fatal(err)
			}
			if hint := reviewSizeHint(req); len(got) > hint {
				t.Errorf("%s by %s: the review is %d bytes, its size hint %d: the buffer grows", o.op, u.Username, len(got), hint)
			}
		}
	}
}
