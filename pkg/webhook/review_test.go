package webhook

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func requestWithObject(raw string) *Request {
	r := &Request{}
	r.Object.Raw = []byte(raw)
	r.OldObject.Raw = []byte(raw)
	return r
}

func TestDecodeObject(t *testing.T) {
	t.Run("typed", func(t *testing.T) {
		var pod corev1.Pod
		err := requestWithObject(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","Namespace":"ignored","labels":{"a":"b"}},"unknown":1}`).DecodeObject(&pod)
		if err != nil || pod.Name != "p" || pod.Namespace != "" || pod.Labels["a"] != "b" || pod.Kind != "Pod" {
			t.Errorf("DecodeObject = %v, pod %+v; want name p, no namespace (keys are case-sensitive), label a=b", err, pod.ObjectMeta)
		}
	})
	t.Run("no apiVersion or kind", func(t *testing.T) {
		var cm corev1.ConfigMap
		if err := requestWithObject(`{"data":{"k":"v"}}`).DecodeOldObject(&cm); err != nil || cm.Data["k"] != "v" {
			t.Errorf("DecodeOldObject = %v, data %v; want k=v", err, cm.Data)
		}
	})
	t.Run("no object", func(t *testing.T) {
		if err := (&Request{}).DecodeObject(&corev1.Pod{}); !errors.Is(err, ErrNoObject) {
			t.Errorf("DecodeObject of an absent object = %v, want ErrNoObject", err)
		}
	})
	t.Run("type error", func(t *testing.T) {
		err := requestWithObject(`{"metadata":{"labels":{"a":1}}}`).DecodeObject(&corev1.Pod{})
		if err == nil || !strings.HasPrefix(err.Error(), "json: cannot unmarshal number") {
			t.Errorf("DecodeObject of a numeric label = %v, want a json type error", err)
		}
	})
	t.Run("another kind", func(t *testing.T) {
		err := requestWithObject(`{"apiVersion":"v1","kind":"ConfigMap"}`).DecodeObject(&corev1.Pod{})
		if err == nil || !strings.Contains(err.Error(), "Kind=ConfigMap") {
			t.Errorf("DecodeObject of a ConfigMap into a Pod = %v, want an error naming the kind", err)
		}
	})
	t.Run("unregistered kind", func(t *testing.T) {
		err := requestWithObject(`{"apiVersion":"apps/v1","kind":"Deployment"}`).DecodeObject(&corev1.Pod{})
		if err == nil || !strings.Contains(err.Error(), `no kind "Deployment" is registered for version "apps/v1"`) {
			t.Errorf("DecodeObject of a Deployment = %v, want not registered", err)
		}
	})
	t.Run("unstructured", func(t *testing.T) {
		var u unstructured.Unstructured
		err := requestWithObject(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1}}`).DecodeObject(&u)
		if size, _, _ := unstructured.NestedInt64(u.Object, "spec", "size"); err != nil || u.GetName() != "w" || size != 1 {
			t.Errorf("DecodeObject into Unstructured = %v, %v; want name w, spec.size 1", err, u.Object)
		}
	})
	t.Run("type outside the scheme", func(t *testing.T) {
		var obj metav1.PartialObjectMetadata
		err := requestWithObject(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`).DecodeObject(&obj)
		if err != nil || obj.Name != "w" {
			t.Errorf("DecodeObject into a type outside the scheme = %v, name %q; want w", err, obj.Name)
		}
	})
}

func TestDecodeReviewYAML(t *testing.T) {
	body := "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest:\n  uid: abc\n  operation: CREATE\n  object: {metadata: {name: x}}\n"
	req, version, err := decodeReview([]byte(body))
	if err != nil || version != versionV1 || req.UID != "abc" || string(req.Object.Raw) != `{"metadata":{"name":"x"}}` {
		t.Errorf("decodeReview(YAML) = %+v, %q, %v", req, version, err)
	}
}

// TestFromV1beta1 checks that every field of a v1beta1 request reaches the
// v1 form: both encode to the same JSON.
func TestFromV1beta1(t *testing.T) {
	gvk := metav1.GroupVersionKind{Group: "g", Version: "v", Kind: "K"}
	gvr := metav1.GroupVersionResource{Group: "g", Version: "v", Resource: "ks"}
	in := &admissionv1beta1.AdmissionRequest{
		UID: "u", Kind: gvk, Resource: gvr, SubResource: "s", RequestKind: &gvk, RequestResource: &gvr,
		RequestSubResource: "rs", Name: "n", Namespace: "ns", Operation: admissionv1beta1.Update,
		UserInfo: authenticationv1.UserInfo{Username: "u", UID: "1", Groups: []string{"g"}, Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}},
		Object:   runtime.RawExtension{Raw: []byte(`{"a":1}`)}, OldObject: runtime.RawExtension{Raw: []byte(`{"a":0}`)},
		DryRun: ptr.To(true), Options: runtime.RawExtension{Raw: []byte(`{"kind":"UpdateOptions"}`)},
	}
	a, _ := json.Marshal(in)
	b, _ := json.Marshal(fromV1beta1(in))
	if string(a) != string(b) {
		t.Errorf("fromV1beta1:\n got  %s\n want %s", b, a)
	}
}

func TestResponseBuilders(t *testing.T) {
	base := Denied("x").WithWarnings("a")
	r1, r2 := base.WithWarnings("b"), base.WithWarnings("c")
	if !reflect.DeepEqual(r1.Warnings, []string{"a", "b"}) || !reflect.DeepEqual(r2.Warnings, []string{"a", "c"}) {
		t.Errorf("WithWarnings shares storage: %v, %v", r1.Warnings, r2.Warnings)
	}
	withK := Allowed("").WithAuditAnnotation("k", "1")
	withJ := withK.WithAuditAnnotation("j", "2")
	if len(withK.AuditAnnotations) != 1 || len(withJ.AuditAnnotations) != 2 {
		t.Errorf("WithAuditAnnotation shares its map: %v, %v", withK.AuditAnnotations, withJ.AuditAnnotations)
	}
	if r := Patched(map[string]any{"a": 1}, []byte(`[1]`)); r.Allowed || r.Result.Code != http.StatusInternalServerError {
		t.Errorf("Patched(object, array) = %+v, want Errored 500", r.AdmissionResponse)
	}
	if r := Patched(func() {}, []byte(`{}`)); r.Allowed || r.Result.Code != http.StatusInternalServerError {
		t.Errorf("Patched(unencodable) = %+v, want Errored 500", r.AdmissionResponse)
	}
	if r := PatchedJSON(nil); !r.Allowed || r.PatchType != nil {
		t.Errorf("PatchedJSON(nil) = %+v, want allowed without a patch type", r.AdmissionResponse)
	}
}
