package conversion

import (
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// newReview is the ConversionReview of objects in the first of versions
// this server speaks, and an empty review of the same version to decode
// the answer into. As upstream, the request carries an empty response.
func newReview(versions []string, objects []runtime.RawExtension, desired string, uid types.UID) (request, response runtime.Object, err error) {
	for _, v := range versions {
		switch v {
		case apiextensionsv1beta1.SchemeGroupVersion.Version:
			req := &apiextensionsv1beta1.ConversionRequest{UID: uid, DesiredAPIVersion: desired, Objects: objects}
			return &apiextensionsv1beta1.ConversionReview{Request: req, Response: &apiextensionsv1beta1.ConversionResponse{}},
				&apiextensionsv1beta1.ConversionReview{}, nil
		case apiextensionsv1.SchemeGroupVersion.Version:
			req := &apiextensionsv1.ConversionRequest{UID: uid, DesiredAPIVersion: desired, Objects: objects}
			return &apiextensionsv1.ConversionReview{Request: req, Response: &apiextensionsv1.ConversionResponse{}},
				&apiextensionsv1.ConversionReview{}, nil
		}
	}
	return nil, nil, errors.New("no supported conversion review versions")
}

// convertedObjects checks a decoded answer and returns its objects. A v1
// answer must be a v1 ConversionReview for uid; v1beta1 answers are not
// checked for either (as upstream, for compatibility).
func convertedObjects(uid types.UID, answer runtime.Object) ([]runtime.RawExtension, error) {
	switch a := answer.(type) {
	case *apiextensionsv1.ConversionReview:
		want := apiextensionsv1.SchemeGroupVersion.WithKind("ConversionReview")
		if got := a.GroupVersionKind(); got != want {
			return nil, fmt.Errorf("expected webhook response of %v, got %v", want.String(), got.String())
		}
		if a.Response == nil {
			return nil, errors.New("no response provided")
		}
		if a.Response.UID != uid {
			return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, a.Response.UID)
		}
		return succeeded(a.Response.Result, a.Response.ConvertedObjects)
	case *apiextensionsv1beta1.ConversionReview:
		if a.Response == nil {
			return nil, errors.New("no response provided")
		}
		return succeeded(a.Response.Result, a.Response.ConvertedObjects)
	}
	return nil, fmt.Errorf("unrecognized response type: %T", answer)
}

// succeeded returns objects when result says Success, else the result's
// message (or its status).
func succeeded(result metav1.Status, objects []runtime.RawExtension) ([]runtime.RawExtension, error) {
	if result.Status == metav1.StatusSuccess {
		return objects, nil
	}
	if result.Message != "" {
		return nil, errors.New(result.Message)
	}
	return nil, fmt.Errorf("response.result.status was '%s', not 'Success'", result.Status)
}

// rawObject decodes one converted object.
func rawObject(raw runtime.RawExtension) (runtime.Object, error) {
	if raw.Object != nil {
		return raw.Object, nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw.Raw); err != nil {
		return nil, err
	}
	return u, nil
}
