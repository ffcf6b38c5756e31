package updiff

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Described are the errors of a write as the validation differential tests
// compare them: each as type, field, detail and message; on update,
// metadata errors deduplicated and sorted after the others (upstream and
// admitd check metadata in different orders).
type Described struct {
	Errors   []string
	Metadata []string
}

// Describe is errs as compared.
func Describe(errs field.ErrorList, update bool) Described {
	var out Described
	for _, e := range errs {
		s := fmt.Sprintf("%s|%s|%s|%s", e.Type, e.Field, e.Detail, e.Error())
		if update && strings.HasPrefix(e.Field, "metadata") {
			if !slices.Contains(out.Metadata, s) {
				out.Metadata = append(out.Metadata, s)
			}
			continue
		}
		out.Errors = append(out.Errors, s)
	}
	slices.Sort(out.Metadata)
	return out
}

// Indexless is a field path with every index written [i], to count errors
// by the field they concern.
func Indexless(path string) string {
	var b strings.Builder
	skip := false
	for _, r := range path {
		switch {
		case r == '[':
			skip = true
		case r == ']':
			skip = false
			b.WriteString("[i]")
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}
