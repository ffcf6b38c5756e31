package admission

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// NewForbidden is the 403 a plugin returns to reject a request, named as
// upstream names it: the request name, else on CREATE the object's name or
// generateName, else "Unknown". A Forbidden StatusError is returned as is.
func NewForbidden(a *Attributes, err error) error {
	var se *apierrors.StatusError
	if errors.As(err, &se) && apierrors.IsForbidden(se) {
		return se
	}
	name := a.Name
	if name == "" && a.Object != nil {
		if m, merr := meta.Accessor(a.Object); merr != nil {
			name = "Unknown/errorGettingName"
		} else if name = m.GetName(); name == "" {
			name = m.GetGenerateName()
		}
	}
	if name == "" {
		name = "Unknown"
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), name, err)
}
