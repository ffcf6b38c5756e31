package match

import (
	"unique"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission"
)

// selector is a label selector parsed once, at compile time.
type selector struct {
	sel labels.Selector
	// err is the parse error; upstream reports it (as a 500) only when the
	// rules match, so it is kept rather than refused.
	err error
	// every is true for the empty selector {}: it matches without reading
	// labels (and without a namespace lookup).
	every bool
	// key is shared by identical selectors, so a request evaluates each
	// distinct namespaceSelector once. Zero for nil (match-nothing).
	key unique.Handle[string]
}

func compileSelector(ls *metav1.LabelSelector) selector {
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return selector{err: err}
	}
	s := selector{sel: sel, every: sel.Empty()}
	if ls != nil && !s.every {
		s.key = unique.Make(sel.String())
	}
	return s
}

// isNamespaceWrite reports whether the namespaceSelector reads the labels of
// the request object itself: CREATE or UPDATE of a namespace (checked by
// resource name only, as upstream does). A DELETE or a subresource reads the
// stored namespace.
func isNamespaceWrite(a *admission.Attributes) bool {
	return a.Resource.Resource == "namespaces" && a.Subresource == "" &&
		(a.Operation == admission.Create || a.Operation == admission.Update)
}

// namespaceSelected applies a namespaceSelector. A false result with an
// error means "undecided": the error is reported only if the rules match.
func (r *Request) namespaceSelected(s *selector) (bool, *apierrors.StatusError) {
	a := r.attrs
	if a.Namespace == "" && a.Resource.Resource != "namespaces" {
		// Cluster-scoped resources are never excluded by a namespaceSelector.
		return true, nil
	}
	if s.err != nil {
		return false, apierrors.NewInternalError(s.err)
	}
	if s.every {
		return true, nil
	}
	if isNamespaceWrite(a) {
		m, err := meta.Accessor(a.Object)
		if err != nil {
			return false, apierrors.NewInternalError(err)
		}
		return s.sel.Matches(labels.Set(m.GetLabels())), nil
	}
	lbls, serr := r.namespaceLabels()
	if serr != nil {
		return false, serr
	}
	return r.selectedBy(s, lbls), nil
}

// selectedBy evaluates a namespaceSelector against the request namespace's
// labels, remembering the result per distinct selector.
func (r *Request) selectedBy(s *selector, lbls map[string]string) bool {
	if s.key == (unique.Handle[string]{}) {
		return s.sel.Matches(labels.Set(lbls))
	}
	for _, e := range r.memo[:r.nmemo] {
		if e.key == s.key {
			return e.match
		}
	}
	m := s.sel.Matches(labels.Set(lbls))
	if r.nmemo < len(r.memo) {
		r.memo[r.nmemo] = selectorMemo{key: s.key, match: m}
		r.nmemo++
	}
	return m
}

// objectSelected applies an objectSelector to the new and the old object.
func (r *Request) objectSelected(s *selector) (bool, *apierrors.StatusError) {
	if s.err != nil {
		return false, apierrors.NewInternalError(s.err)
	}
	if s.every {
		return true, nil
	}
	return objectMatches(r.attrs.Object, s.sel) || objectMatches(r.attrs.OldObject, s.sel), nil
}

// objectMatches is false for a nil object and for one without metadata; an
// object without labels is matched against the empty set.
func objectMatches(obj runtime.Object, sel labels.Selector) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(m.GetLabels()))
}
