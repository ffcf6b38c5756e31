package webhooks

import (
	"encoding/json"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/yamlbound"
)

// reviewCodec decodes webhook answers exactly as upstream's webhook client
// does: a body of another registered kind or version is a conversion error.
var reviewCodec runtime.Codec

func init() {
	s := runtime.NewScheme()
	utilruntime.Must(admissionv1beta1.AddToScheme(s))
	utilruntime.Must(admissionv1.AddToScheme(s))
	reviewCodec = serializer.NewCodecFactory(s).LegacyCodec(admissionv1beta1.SchemeGroupVersion, admissionv1.SchemeGroupVersion)
}

// reviewVersion picks the AdmissionReview version from the webhook's list.
func reviewVersion(versions []string) (string, bool) {
	for _, v := range versions {
		if v == "v1" || v == "v1beta1" {
			return v, true
		}
	}
	return "", false
}

var errNoKnownVersion = errors.New("could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)")

// invocation is what a matched webhook is called with: the resource and
// kind it matched as (an equivalent one under matchPolicy Equivalent) and the
// objects converted to that kind.
type invocation struct {
	Resource    schema.GroupVersionResource
	Subresource string
	Kind        schema.GroupVersionKind
	Object      runtime.Object
	OldObject   runtime.Object
	// objectJSON is Object as it was sent to the webhook, kept so that a
	// patch applies to exactly those bytes without encoding them again.
	objectJSON []byte
}

// encodeObjects encodes the invocation's objects once.
func (inv *invocation) encodeObjects() (obj, old []byte, err error) {
	if inv.Object != nil {
		if inv.objectJSON == nil {
			if inv.objectJSON, err = json.Marshal(inv.Object); err != nil {
				return nil, nil, err
			}
		}
		obj = inv.objectJSON
	}
	if inv.OldObject != nil {
		if old, err = json.Marshal(inv.OldObject); err != nil {
			return nil, nil, err
		}
	}
	return obj, old, nil
}

// newRequest builds the AdmissionRequest of one call.
func newRequest(a *admission.Attributes, inv *invocation, uid types.UID) (*admissionv1.AdmissionRequest, error) {
	objJSON, oldJSON, err := inv.encodeObjects()
	if err != nil {
		return nil, err
	}
	requestKind := metav1.GroupVersionKind{Group: a.Kind.Group, Version: a.Kind.Version, Kind: a.Kind.Kind}
	requestResource := metav1.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource}
	req := &admissionv1.AdmissionRequest{
		UID:                uid,
		Kind:               metav1.GroupVersionKind{Group: inv.Kind.Group, Version: inv.Kind.Version, Kind: inv.Kind.Kind},
		Resource:           metav1.GroupVersionResource{Group: inv.Resource.Group, Version: inv.Resource.Version, Resource: inv.Resource.Resource},
		SubResource:        inv.Subresource,
		RequestKind:        &requestKind,
		RequestResource:    &requestResource,
		RequestSubResource: a.Subresource,
		Name:               a.Name,
		Namespace:          a.Namespace,
		Operation:          admissionv1.Operation(a.Operation),
		UserInfo:           a.UserInfo,
		DryRun:             &a.DryRun,
	}
	if objJSON != nil {
		req.Object = runtime.RawExtension{Raw: objJSON}
	}
	if oldJSON != nil {
		req.OldObject = runtime.RawExtension{Raw: oldJSON}
	}
	if a.Options != nil {
		req.Options = runtime.RawExtension{Object: a.Options}
	}
	return req, nil
}

// decodeResponse decodes and verifies a webhook's answer to a review of
// version sent with uid.
func decodeResponse(body []byte, version string, uid types.UID, mutating bool) (*admissionv1.AdmissionResponse, error) {
	if !utilyaml.IsJSONBuffer(body) { // the codec reads YAML: bound what its aliases expand to
		if err := yamlbound.Check(body); err != nil {
			return nil, fmt.Errorf("failed to call webhook: %w", err)
		}
	}
	if version == "v1beta1" {
		return decodeV1beta1(body, mutating)
	}
	review, err := decodeV1Review(body)
	if err != nil {
		return nil, fmt.Errorf("failed to call webhook: %w", err)
	}
	if review.Response == nil {
		return nil, invalidResponse("webhook response was absent")
	}
	r := review.Response
	if r.UID != uid {
		return nil, invalidResponse(fmt.Sprintf("expected response.uid=%q, got %q", uid, r.UID))
	}
	gvk := review.GroupVersionKind()
	if gvk != admissionv1.SchemeGroupVersion.WithKind("AdmissionReview") {
		return nil, invalidResponse(fmt.Sprintf("expected webhook response of %v, got %v", admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"), gvk))
	}
	if err := verifyPatchFields(r, mutating); err != nil {
		return nil, err
	}
	return r, nil
}

func verifyPatchFields(r *admissionv1.AdmissionResponse, mutating bool) error {
	if !mutating {
		if len(r.Patch) > 0 {
			return invalidResponse("validating webhook may not return response.patch")
		}
		if r.PatchType != nil {
			return invalidResponse("validating webhook may not return response.patchType")
		}
		return nil
	}
	hasPatch, hasType := len(r.Patch) > 0, r.PatchType != nil
	switch {
	case hasPatch && !hasType:
		return invalidResponse("webhook returned response.patch but not response.patchType")
	case hasType && !hasPatch:
		return invalidResponse("webhook returned response.patchType but not response.patch")
	case hasType && *r.PatchType == "":
		return invalidResponse(`webhook returned invalid response.patchType of ""`)
	}
	return nil
}

// decodeV1beta1 is the lenient v1beta1 path: only the presence of a
// response is checked, and any patch is a JSON patch.
func decodeV1beta1(body []byte, mutating bool) (*admissionv1.AdmissionResponse, error) {
	review := &admissionv1beta1.AdmissionReview{}
	if _, _, err := reviewCodec.Decode(body, nil, review); err != nil {
		return nil, fmt.Errorf("failed to call webhook: %w", err)
	}
	if review.Response == nil {
		return nil, invalidResponse("webhook response was absent")
	}
	b := review.Response
	r := &admissionv1.AdmissionResponse{UID: b.UID, Allowed: b.Allowed, Result: b.Result,
		AuditAnnotations: b.AuditAnnotations, Warnings: b.Warnings}
	if mutating && len(b.Patch) > 0 {
		pt := admissionv1.PatchTypeJSONPatch
		r.Patch, r.PatchType = b.Patch, &pt
	}
	return r, nil
}

func invalidResponse(msg string) error {
	return errors.New("received invalid webhook response: " + msg)
}

// isV1Review reports whether a decoded review names itself a v1
// AdmissionReview.
func isV1Review(r *admissionv1.AdmissionReview) bool {
	return r.APIVersion == admissionv1.SchemeGroupVersion.String() && r.Kind == "AdmissionReview"
}

// namesV1Review reports whether the codec, which finds apiVersion and kind
// regardless of case (the last of each wins), reads body as a v1
// AdmissionReview: a "Kind" beside "kind" is the codec's kind.
func namesV1Review(body []byte) bool {
	gvk, err := serializerjson.DefaultMetaFactory.Interpret(body)
	return err == nil && *gvk == admissionv1.SchemeGroupVersion.WithKind("AdmissionReview")
}

// decodeV1Review decodes a v1 answer. The common case (a well-formed v1
// AdmissionReview) is one JSON decode; anything else goes through the
// versioning codec, whose errors upstream's clients report.
func decodeV1Review(body []byte) (*admissionv1.AdmissionReview, error) {
	if review, ok := decodePlainV1Review(body); ok && isV1Review(review) {
		return review, nil
	}
	review := &admissionv1.AdmissionReview{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, review); err == nil && isV1Review(review) && namesV1Review(body) {
		return review, nil
	}
	review = &admissionv1.AdmissionReview{}
	if _, _, err := reviewCodec.Decode(body, nil, review); err != nil {
		return nil, err
	}
	return review, nil
}
