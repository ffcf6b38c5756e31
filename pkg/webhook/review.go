package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/admitd/admitd/pkg/yamlbound"
)

// ErrNoObject is returned by DecodeObject and DecodeOldObject when the
// request carries no such object (oldObject on CREATE, object on DELETE).
var ErrNoObject = errors.New("webhook: the request has no object to decode")

// deserializer decodes reviews and the objects inside them as upstream's
// test webhook does: JSON, YAML or protobuf sniffed from the data, field
// names matched case-sensitively, unknown fields ignored, no defaulting. Its
// scheme holds the kinds that webhook registers (core/v1, admission and
// admissionregistration v1 and v1beta1), so its error texts are the same.
// It is built on first use, not when a program that imports this package
// starts.
var deserializer = sync.OnceValue(func() runtime.Decoder {
	scheme := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(admissionv1.AddToScheme(scheme))
	utilruntime.Must(admissionv1beta1.AddToScheme(scheme))
	utilruntime.Must(admissionregistrationv1.AddToScheme(scheme))
	utilruntime.Must(admissionregistrationv1beta1.AddToScheme(scheme))
	return serializer.NewCodecFactory(scheme).UniversalDeserializer()
})

// DecodeObject decodes the request's object into into: a core/v1 type such
// as *corev1.Pod, an *unstructured.Unstructured, or any other type
// implementing runtime.Object (decoded directly from the JSON, so custom
// resource types work without a scheme). Field names are matched
// case-sensitively and unknown fields ignored, as the API server does. It
// returns ErrNoObject if there is no object (oldObject on CREATE, object on
// DELETE), and an error if the object's apiVersion/kind names another kind
// of the decoding scheme (core/v1, admission, admissionregistration) than
// into's.
func (r *Request) DecodeObject(into runtime.Object) error {
	return decodeRaw(r.Object, into)
}

// DecodeOldObject decodes the request's oldObject (UPDATE and DELETE) as
// DecodeObject decodes the object.
func (r *Request) DecodeOldObject(into runtime.Object) error {
	return decodeRaw(r.OldObject, into)
}

func decodeRaw(raw runtime.RawExtension, into runtime.Object) error {
	if len(raw.Raw) == 0 {
		return ErrNoObject
	}
	obj, gvk, err := deserializer().Decode(raw.Raw, nil, into)
	if err != nil {
		return err
	}
	if obj != into {
		return fmt.Errorf("object is %v, not the type decoded into (%T)", gvk, into)
	}
	return nil
}

// Review versions: the apiVersion of an AdmissionReview.
const (
	versionV1      = "admission.k8s.io/v1"
	versionV1beta1 = "admission.k8s.io/v1beta1"
)

// requestError is a review the HTTP layer rejects before any Handler runs.
type requestError struct {
	code int
	msg  string
}

func (e *requestError) Error() string { return e.msg }

// decodeReview decodes an AdmissionReview of either version and returns its
// request in v1 form and the version to answer in.
func decodeReview(body []byte) (Request, string, error) {
	if !utilyaml.IsJSONBuffer(body) { // read as YAML: bound what its aliases expand to
		if err := yamlbound.Check(body); err != nil {
			return Request{}, "", &requestError{http.StatusBadRequest, "Request could not be decoded: " + err.Error()}
		}
	}
	obj, gvk, err := deserializer().Decode(body, nil, nil)
	if err != nil {
		return Request{}, "", &requestError{http.StatusBadRequest, "Request could not be decoded: " + err.Error()}
	}
	switch review := obj.(type) {
	case *admissionv1.AdmissionReview:
		if review.Request == nil {
			return Request{}, "", &requestError{http.StatusBadRequest, "AdmissionReview has no request"}
		}
		return Request{AdmissionRequest: *review.Request}, versionV1, nil
	case *admissionv1beta1.AdmissionReview:
		if review.Request == nil {
			return Request{}, "", &requestError{http.StatusBadRequest, "AdmissionReview has no request"}
		}
		return Request{AdmissionRequest: fromV1beta1(review.Request)}, versionV1beta1, nil
	}
	return Request{}, "", &requestError{http.StatusBadRequest, fmt.Sprintf("Unsupported group version kind: %v", gvk)}
}

func fromV1beta1(r *admissionv1beta1.AdmissionRequest) admissionv1.AdmissionRequest {
	return admissionv1.AdmissionRequest{
		UID:                r.UID,
		Kind:               r.Kind,
		Resource:           r.Resource,
		SubResource:        r.SubResource,
		RequestKind:        r.RequestKind,
		RequestResource:    r.RequestResource,
		RequestSubResource: r.RequestSubResource,
		Name:               r.Name,
		Namespace:          r.Namespace,
		Operation:          admissionv1.Operation(r.Operation),
		UserInfo:           r.UserInfo,
		Object:             r.Object,
		OldObject:          r.OldObject,
		DryRun:             r.DryRun,
		Options:            r.Options,
	}
}

// encodeReview returns the AdmissionReview answering in version with resp.
func encodeReview(version string, resp *admissionv1.AdmissionResponse) ([]byte, error) {
	if version == versionV1beta1 {
		out := admissionv1beta1.AdmissionReview{Response: &admissionv1beta1.AdmissionResponse{
			UID:              resp.UID,
			Allowed:          resp.Allowed,
			Result:           resp.Result,
			Patch:            resp.Patch,
			AuditAnnotations: resp.AuditAnnotations,
			Warnings:         resp.Warnings,
		}}
		if resp.PatchType != nil {
			pt := admissionv1beta1.PatchType(*resp.PatchType)
			out.Response.PatchType = &pt
		}
		out.APIVersion, out.Kind = versionV1beta1, "AdmissionReview"
		return json.Marshal(&out)
	}
	out := admissionv1.AdmissionReview{Response: resp}
	out.APIVersion, out.Kind = versionV1, "AdmissionReview"
	return json.Marshal(&out)
}
