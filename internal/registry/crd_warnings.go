package registry

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// customResourceWarnings are upstream's warnings on a custom resource's
// create or update (apiextensions-apiserver's customResourceStrategy):
// each finalizer the write adds (in name order) that is not a qualified
// name, or that has no domain path and is not a standard one (meta_validate.go).
func customResourceWarnings(obj, old runtime.Object) []string {
	added := slices.Clone(objectMeta(obj).GetFinalizers())
	if old != nil {
		had := objectMeta(old).GetFinalizers()
		added = slices.DeleteFunc(added, func(f string) bool { return slices.Contains(had, f) })
	}
	slices.Sort(added)
	added = slices.Compact(added)
	p := field.NewPath("metadata", "finalizers")
	var w []string
	for _, f := range added {
		for _, msg := range utilvalidation.IsQualifiedName(f) {
			w = append(w, fmt.Sprintf("%s: %q: %s", p, f, msg))
		}
		if strings.Contains(f, "/") || standardFinalizers[f] {
			continue
		}
		if strings.Contains(f, ".") {
			w = append(w, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers", p, f))
		} else {
			w = append(w, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers", p, f))
		}
	}
	return w
}
