package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// maxJSONPatchOperations is upstream's limit on the operations of a JSON
// patch.
const maxJSONPatchOperations = 10000

// defaultJSONPatchMaxCopyBytes is upstream's bound on what the copy
// operations of one JSON patch may add (JSONPatchMaxCopyBytes, the fix of
// CVE-2019-1002100): without it, each copy of a document into itself
// doubles it.
const defaultJSONPatchMaxCopyBytes = 3 * 1024 * 1024

// limitJSONPatchCopies sets json-patch's process-wide copy bound to n
// unless a smaller one is already set, as upstream's server does. The
// admission plugins apply webhooks' and policies' patches with the same
// library, so the bound covers them too.
func limitJSONPatchCopies(n int64) {
	if n <= 0 {
		return
	}
	for {
		existing := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
		if existing > 0 && existing <= n {
			return
		}
		if atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, existing, n) {
			return
		}
	}
}

// jsonPatchOp is what upstream decodes a JSON patch's operations into to
// find their unknown and duplicate fields.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// applyPatch applies a patch document to the current object and decodes
// the result as the resource's kind, as upstream's patch handler does:
// under fieldValidation Warn or Strict the patch itself is decoded strictly
// first (repeated keys; for a JSON patch, unknown operation fields), and
// its strict errors come before those of the patched object. Under Strict
// they, and any error decoding the patched object, are a 422 on "patch".
func applyPatch(rq *request, res *registry.Resource, mt string, patch []byte, current runtime.Object, fieldValidation string) (runtime.Object, error) {
	cur, err := json.Marshal(current)
	if err != nil {
		return nil, err
	}
	if fieldValidation == "" {
		fieldValidation = metav1.FieldValidationWarn // upstream's default
	}
	strictMode := fieldValidation == metav1.FieldValidationStrict || fieldValidation == metav1.FieldValidationWarn
	var patched []byte
	var patchErrs []error
	invalidValue := func() string { return string(patched) }
	switch mt {
	case mediaJSONPatch:
		if patched, patchErrs, err = applyJSONPatch(cur, patch, strictMode); err != nil {
			return nil, err
		}
	case mediaMergePatch:
		if strictMode {
			if patchErrs, err = sigsjson.UnmarshalStrict(patch, &map[string]any{}); err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
		}
		if patched, err = jsonpatch.MergePatch(cur, patch); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case mediaStrategicPatch:
		patchMap := map[string]any{}
		if strictMode {
			patchErrs, err = sigsjson.UnmarshalStrict(patch, &patchMap)
		} else {
			err = sigsjson.UnmarshalCaseSensitivePreserveInts(patch, &patchMap)
		}
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		schemaObj, _ := layout.NewObject(res)
		if patched, err = strategicpatch.StrategicMergePatch(cur, patch, schemaObj); err != nil {
			return nil, strategicMergePatchError(err)
		}
		invalidValue = func() string { return fmt.Sprintf("%+v", patchMap) }
		if patched, err = keepTypeMeta(patchMap, patched, current); err != nil {
			return nil, err
		}
	}
	obj, objErrs, err := decodeJSON(res, patched)
	if err != nil {
		if terr := patchedCustomTypeMeta(res, patched); terr != nil {
			return nil, terr
		}
		return nil, invalidPatch(invalidValue(), err.Error())
	}
	if !strictMode {
		return obj, nil
	}
	if errs := append(patchErrs, objErrs...); len(errs) > 0 {
		if fieldValidation == metav1.FieldValidationStrict {
			return nil, invalidPatch(invalidValue(), runtime.NewStrictDecodingError(errs).Error())
		}
		addStrictDecodingWarnings(rq, errs)
	}
	return obj, nil
}

// keepTypeMeta undoes what a strategic merge patch did to apiVersion and
// kind: upstream converts the patched map into the typed object, which
// does not take them from it, so such a patch changes neither (where a
// merge or JSON patch that changes them fails).
func keepTypeMeta(patchMap map[string]any, patched []byte, current runtime.Object) ([]byte, error) {
	_, kind := patchMap["kind"]
	_, apiVersion := patchMap["apiVersion"]
	if !kind && !apiVersion {
		return patched, nil
	}
	var m map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(patched, &m); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	gvk := current.GetObjectKind().GroupVersionKind()
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return json.Marshal(m)
}

// applyJSONPatch applies a JSON patch to cur; with strict, it also returns
// the patch's own strict errors.
func applyJSONPatch(cur, patch []byte, strict bool) ([]byte, []error, error) {
	var strictErrs []error
	if strict {
		var ops []jsonPatchOp
		errs, err := sigsjson.UnmarshalStrict(patch, &ops)
		if err != nil {
			// the decoder names the Go type: upstream's is in its handlers package
			msg := strings.ReplaceAll(err.Error(), "apiserver.jsonPatchOp", "handlers.jsonPatchOp")
			return nil, nil, apierrors.NewBadRequest("error decoding patch: " + msg)
		}
		for _, e := range errs {
			strictErrs = append(strictErrs, fmt.Errorf("json patch %v", e))
		}
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if len(p) > maxJSONPatchOperations {
		return nil, nil, apierrors.NewRequestEntityTooLargeError(
			fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(p)))
	}
	patched, err := applyRecovering(p, cur)
	if err != nil {
		return nil, nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return patched, strictErrs, nil
}

// applyRecovering is p.Apply with json-patch v4's panics returned as
// errors: it dereferences the missing value of a replace or test of the
// whole document (path ""). Upstream's server recovers and answers 500;
// here the patch fails as any that does not apply.
func applyRecovering(p jsonpatch.Patch, doc []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the JSON patch could not be applied: %v", r)
		}
	}()
	return p.Apply(doc)
}

// strategicMergePatchError is upstream's answer to a failed strategic
// merge: a 400 or 422 for the merge's own errors, anything else as is (a
// 500).
func strategicMergePatchError(err error) error {
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys,
		mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		return apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return err
}

// invalidPatch is upstream's 422 for a patched object that does not decode.
func invalidPatch(value, detail string) error {
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), value, detail)})
}
