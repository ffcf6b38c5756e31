package lint

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// keyLimit is what a conjunction of selectors requires of one label key.
type keyLimit struct {
	in        []string // nil: any value; else one of these
	notIn     []string
	exists    bool
	notExists bool
}

// labelLimits is what a conjunction of selectors requires of a label set.
type labelLimits map[string]*keyLimit

// add narrows l by the requirements of a selector and reports whether
// some label set still satisfies every selector added.
func (l labelLimits) add(reqs []labels.Requirement) bool {
	for _, r := range reqs {
		if !l.require(r) {
			return false
		}
	}
	return true
}

// parsedSelectors are a hook's selectors as requirements, parsed once.
type parsedSelectors struct {
	namespace, object []labels.Requirement
	// valid is false when a selector is nil or does not parse: it
	// matches nothing.
	valid bool
}

func parseSelectors(ns, obj *metav1.LabelSelector) parsedSelectors {
	n, okN := requirements(ns)
	o, okO := requirements(obj)
	return parsedSelectors{namespace: n, object: o, valid: okN && okO}
}

func requirements(sel *metav1.LabelSelector) ([]labels.Requirement, bool) {
	if sel == nil {
		return nil, false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, false
	}
	reqs, _ := s.Requirements()
	return reqs, true
}

func (l labelLimits) require(r labels.Requirement) bool {
	k := l[r.Key()]
	if k == nil {
		k = &keyLimit{}
		l[r.Key()] = k
	}
	values := r.ValuesUnsorted()
	switch r.Operator() {
	case selection.In, selection.Equals, selection.DoubleEquals:
		k.exists = true
		if k.in == nil {
			k.in = values
		} else {
			k.in = slices.DeleteFunc(k.in, func(v string) bool { return !slices.Contains(values, v) })
		}
	case selection.NotIn, selection.NotEquals:
		k.notIn = append(k.notIn, values...)
	case selection.DoesNotExist:
		k.notExists = true
	default: // Exists, Gt, Lt
		k.exists = true
	}
	return k.satisfiable()
}

func (k *keyLimit) satisfiable() bool {
	if k.exists && k.notExists {
		return false
	}
	if k.in == nil {
		return true
	}
	for _, v := range k.in {
		if !slices.Contains(k.notIn, v) {
			return true
		}
	}
	return false
}

func (l labelLimits) clone() labelLimits {
	out := labelLimits{}
	for key, k := range l {
		c := *k
		c.in, c.notIn = slices.Clone(k.in), slices.Clone(k.notIn)
		out[key] = &c
	}
	return out
}
