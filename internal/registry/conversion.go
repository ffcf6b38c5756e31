package registry

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// storageVersions maps the built-in kinds served in several versions to the
// version stored (the others convert through Scheme).
var storageVersions = sync.OnceValue(func() map[schema.GroupKind]string {
	out := map[schema.GroupKind]string{}
	for _, d := range builtinDescriptors() {
		if len(d.alsoServed) > 0 {
			out[d.groupKind()] = d.groupVersion().Version
		}
	}
	return out
})

// ToStorageVersion returns obj in the version its kind is stored in: obj
// itself for kinds served in one version and for custom resources.
func ToStorageVersion(obj runtime.Object) (runtime.Object, error) {
	kinds, _, err := Scheme.ObjectKinds(obj)
	if err != nil || len(kinds) == 0 {
		return obj, nil
	}
	gvk := kinds[0]
	v, ok := storageVersions()[gvk.GroupKind()]
	if !ok || gvk.Version == v {
		return obj, nil
	}
	return ConvertTo(obj, gvk.GroupKind().WithVersion(v))
}

// ConvertTo converts a built-in object to another served version of its
// kind.
func ConvertTo(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	out, err := Scheme.ConvertToVersion(obj, gvk.GroupVersion())
	if err != nil {
		return nil, fmt.Errorf("converting to %s: %w", gvk, err)
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}
