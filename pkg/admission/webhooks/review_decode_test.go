package webhooks

import (
	"reflect"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	sigsjson "sigs.k8s.io/json"
)

var plainReviewSeeds = []string{
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u-1","allowed":true}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u-1","allowed":true,"patchType":"JSONPatch","patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL2EiLCJ2YWx1ZSI6InYifV0="}}` + "\n",
	" \t\r\n{ \"response\" : { \"allowed\" : false , \"uid\" : \"x\" } , \"kind\":\"AdmissionReview\" ,\"apiVersion\":\"admission.k8s.io/v1\"}\n ",
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true,"patch":"!!"}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true,"patch":""}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true,"patch":"W10"}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true,"patchType":""}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true,"allowed":false}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","Allowed":true}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":truex}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u\u0031","allowed":true}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true,"status":{"code":403}}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":null}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`,
	`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","response":{"uid":"u","allowed":true}}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true}} x`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true},}`,
	`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true}`,
	`[]`, ``, `null`,
}

// TestDecodePlainV1ReviewMatchesDecoder checks the plain-review decoder
// against the general one on what it accepts.
func TestDecodePlainV1ReviewMatchesDecoder(t *testing.T) {
	accepted := 0
	for _, body := range plainReviewSeeds {
		if checkPlainReview(t, []byte(body)) {
			accepted++
		}
	}
	// the three well-formed v1 answers, the one with an empty patchType, and
	// the v1beta1 one (which the version check then sends elsewhere)
	if accepted != 5 {
		t.Errorf("%d seeds decoded as plain reviews, want 5", accepted)
	}
}

func FuzzDecodePlainV1Review(f *testing.F) {
	for _, s := range plainReviewSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkPlainReview(t, body) })
}

func checkPlainReview(t *testing.T, body []byte) bool {
	t.Helper()
	got, ok := decodePlainV1Review(body)
	if !ok {
		return false
	}
	want := &admissionv1.AdmissionReview{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, want); err != nil {
		t.Fatalf("%q: decoded as plain, but the decoder fails: %v", body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", body, got, want)
	}
	return true
}

// An answer the codec reads as another kind (a "Kind" beside "kind": the
// codec finds it regardless of case, the last wins) fails as upstream's
// does, though its exact keys name a v1 AdmissionReview.
func TestDecodeV1ReviewReadsKindAsTheCodec(t *testing.T) {
	const resp = `"response":{"uid":"u","allowed":true,"warnings":["w"]}`
	for _, tc := range []struct{ body, err string }{
		{`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",` + resp + `}`, ""},
		{`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","Kind":"Foo",` + resp + `}`, `no kind "Foo" is registered`},
	} {
		_, err := decodeV1Review([]byte(tc.body))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("decodeV1Review(%s) = %v, want %q", tc.body, err, tc.err)
		}
	}
}
