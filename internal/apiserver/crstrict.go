package apiserver

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"

	"github.com/admitd/admitd/internal/registry"
)

// coerceCustom is upstream's schemaCoercingDecoder for a custom resource
// body: duplicate fields, then the fields the schema prunes, become strict
// decoding errors (reported, warned about or ignored per fieldValidation);
// the object is left pruned.
func coerceCustom(res *registry.Resource, data []byte, u *unstructured.Unstructured) ([]error, error) {
	var strict []error
	var raw map[string]any
	if errs, err := sigsjson.UnmarshalStrict(data, &raw); err == nil {
		strict = append(strict, errs...)
	}
	if res.Strategy.Coerce == nil {
		return strict, nil
	}
	unknown, err := res.Strategy.Coerce(u.Object)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", res.Kind, res.Version, res.Kind, err))
	}
	for _, f := range unknown {
		strict = append(strict, fmt.Errorf("unknown field %q", f))
	}
	return strict, nil
}
