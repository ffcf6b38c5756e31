package registry

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// storageVersions maps the built-in kinds served in several versions (or
// groups) to the group and version stored (the others convert through
// Scheme).
var storageVersions = sync.OnceValue(func() map[schema.GroupKind]schema.GroupVersion {
	out := map[schema.GroupKind]schema.GroupVersion{}
	for _, d := range builtinDescriptors() {
		if len(d.alsoServed) > 0 || len(optionalVersions[d.groupVersion().WithKind(d.kind)]) > 0 || d.storedAs != "" {
			out[d.groupKind()] = d.storedGroupVersion()
		}
	}
	return out
})

// ToStorageVersion returns obj in the version its kind is stored in: obj
// itself for kinds served in one version and for custom resources.
func ToStorageVersion(obj runtime.Object) (runtime.Object, error) {
	kinds, _, err := Scheme().ObjectKinds(obj)
	if err != nil || len(kinds) == 0 {
		return obj, nil
	}
	gvk := kinds[0]
	gv, ok := storageVersions()[gvk.GroupKind()]
	if !ok || gvk.GroupVersion() == gv {
		return obj, nil
	}
	return ConvertTo(obj, gv.WithKind(gvk.Kind))
}

// ConvertTo converts a built-in object to another served version of its
// kind, or to the kind of another group that stores it (events.k8s.io's
// Events are core Events).
func ConvertTo(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	kinds, _, err := Scheme().ObjectKinds(obj)
	if err == nil && len(kinds) > 0 && kinds[0].Group != gvk.Group {
		return convertAcrossGroups(obj, gvk)
	}
	out, err := Scheme().ConvertToVersion(obj, gvk.GroupVersion())
	if err != nil {
		return nil, fmt.Errorf("converting to %s: %w", gvk, err)
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}

// convertAcrossGroups converts through the conversion function Scheme
// holds for the pair of types (ConvertToVersion stays within a group).
func convertAcrossGroups(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	out, err := Scheme().New(gvk)
	if err != nil {
		return nil, fmt.Errorf("converting to %s: %w", gvk, err)
	}
	if err := Scheme().Convert(obj, out, nil); err != nil {
		return nil, fmt.Errorf("converting to %s: %w", gvk, err)
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}

// SameStoredKind reports whether objects of kinds a and b are the same
// stored objects, so that ConvertTo converts between them: the same kind,
// or a kind stored as another group's (events.k8s.io and core Events).
func SameStoredKind(a, b schema.GroupKind) bool {
	return storedGroupKind(a) == storedGroupKind(b)
}

func storedGroupKind(gk schema.GroupKind) schema.GroupKind {
	if gv, ok := storageVersions()[gk]; ok {
		return gv.WithKind(gk.Kind).GroupKind()
	}
	return gk
}
