package apiserver

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/internal/registry"
)

// decodeCustomJSON decodes the body of a custom resource as upstream's
// unstructured decoder does, which takes nothing from the URL: a body
// without a kind does not decode (its error quotes the body), one without
// an apiVersion is of another version than the URL's, and one of another
// kind in the URL's version decodes, to be refused as invalid (422) by the
// resource's validation (customTypeMetaError), after admission and the
// resourceVersion checks.
func decodeCustomJSON(res *registry.Resource, data []byte) (runtime.Object, []error, error) {
	gvk := res.GroupVersionKind()
	if _, _, err := readTypeMeta(data); err != nil {
		return nil, nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, nil, undecodable(err.Error(), u.GetKind() != "")
	}
	got := u.GroupVersionKind()
	if got.GroupVersion() != gvk.GroupVersion() {
		return nil, nil, typeMetaMismatch(got, gvk)
	}
	if got.Kind != gvk.Kind {
		return u, nil, nil // refused whatever its fields are
	}
	strict, err := coerceCustom(res, data, u)
	return u, strict, err
}

// patchedCustomTypeMeta is the error of a patch that changed a custom
// resource's apiVersion or kind: upstream decodes the patched object
// whatever they say, and the resource's validation refuses it, citing
// both fields; nil when they are right or the object does not decode.
func patchedCustomTypeMeta(res *registry.Resource, patched []byte) error {
	if !res.Unstructured {
		return nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(patched); err != nil {
		return nil
	}
	return customTypeMetaError(res, u)
}

// customTypeMetaError is the first check of a custom resource's
// validation, which refuses an object whose kind or apiVersion is not its
// definition's, naming the kind the object has (nil for a built-in).
func customTypeMetaError(res *registry.Resource, obj runtime.Object) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !res.Unstructured || !ok {
		return nil
	}
	want := res.GroupVersionKind()
	var errs field.ErrorList
	if u.GetKind() != want.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), "must be "+want.Kind))
	}
	if gv := want.GroupVersion().String(); u.GetAPIVersion() != gv {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), "must be "+gv))
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}, u.GetName(), errs)
}
