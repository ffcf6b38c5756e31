package apiserver

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
)

// Server-side apply: a PATCH whose body (YAML or JSON) is an apply
// configuration. The field manager merges it into the live object, or into
// an empty one to create it, and records the applier as the manager of the
// fields it sets; fields another manager owns with a different value are a
// 409 unless force is set. Admission then runs as for any patch: UPDATE,
// or CREATE with the patch's options as CreateOptions.

// decodeApplyConfiguration reads an apply patch body, with upstream's 400s.
func decodeApplyConfiguration(patch []byte) (*unstructured.Unstructured, error) {
	if err := checkYAML(patch); err != nil {
		return nil, err
	}
	if _, err := utilyaml.ToJSON(patch); err != nil {
		return nil, errBadRequest("error encoding patch: %v", err)
	}
	cfg := &unstructured.Unstructured{Object: map[string]any{}}
	if err := utilyaml.Unmarshal(patch, &cfg.Object); err != nil {
		return nil, errBadRequest("error decoding patch: %v", err)
	}
	return cfg, nil
}

// applyTransform returns the transform of an apply request: the merge of
// the configuration into the current object. It marks rq as an apply, so
// that the write is not recorded a second time as an Update and may
// create the object.
func (s *Server) applyTransform(rq *request, res *registry.Resource, patch []byte, opts *metav1.PatchOptions) (transform, error) {
	cfg, err := decodeApplyConfiguration(patch)
	if err != nil {
		return nil, err
	}
	fm, err := s.fields.get(res, rq.info.Subresource)
	if err != nil {
		return nil, err
	}
	rq.apply = true
	force := opts.Force != nil && *opts.Force
	return func(current runtime.Object) (runtime.Object, error) {
		live := current
		if live == nil {
			empty, err := layout.NewObject(res)
			if err != nil {
				return nil, err
			}
			live = empty
		}
		obj, err := fm.Apply(live, cfg.DeepCopy(), opts.FieldManager, force)
		if err != nil {
			return nil, err
		}
		if err := strictApply(rq, patch, opts.FieldValidation); err != nil {
			return nil, err
		}
		return obj, checkApplied(rq, res, current, obj)
	}, nil
}

// strictApply reports duplicate fields in the patch as fieldValidation asks
// (unknown fields already failed the merge, which types the patch).
func strictApply(rq *request, patch []byte, directive string) error {
	if directive == metav1.FieldValidationIgnore {
		return nil
	}
	err := utilyaml.UnmarshalStrict(patch, &map[string]any{})
	switch {
	case err == nil:
		return nil
	case directive == metav1.FieldValidationStrict:
		return errBadRequest("error strict decoding patch: %v", err)
	default:
		addStrictDecodingWarnings(rq, []error{err}) // a YAML error: one warning per line
		return nil
	}
}

// checkApplied checks the merged object against the request as upstream:
// its name must be the URL's, and it may not name a uid when nothing
// exists.
func checkApplied(rq *request, res *registry.Resource, current, obj runtime.Object) error {
	m := accessor(obj)
	if current == nil && m.GetUID() != "" {
		return apierrors.NewConflict(res.GroupResource(), rq.info.Name,
			fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", m.GetUID()))
	}
	if m.GetName() != rq.info.Name {
		return errBadRequest("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), rq.info.Name)
	}
	return nil
}
