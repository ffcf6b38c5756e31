package apiserver

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// objectFilter is a parsed label and field selector.
type objectFilter struct {
	labels labels.Selector
	fields fields.Selector
}

// newObjectFilter is the filter of a request's selectors (nil: none). A
// field selector may name only metadata.name, metadata.namespace and the
// resource's field labels, as upstream's field label conversions say
// (with their message: the default one for a kind with no labels of its
// own, or naming the kind for a resource with StrictFieldLabels); a custom
// resource's, what customFieldLabel allows.
func newObjectFilter(res *registry.Resource, labelSel labels.Selector, fieldSel fields.Selector) (*objectFilter, error) {
	f := &objectFilter{labels: labels.Everything(), fields: fields.Everything()}
	if labelSel != nil {
		f.labels = labelSel
	}
	if fieldSel == nil {
		return f, nil
	}
	for _, req := range fieldSel.Requirements() {
		if res.Unstructured {
			if err := customFieldLabel(res, req.Field); err != nil {
				return nil, err
			}
			continue
		}
		if req.Field == "metadata.name" || !res.StrictFieldLabels && req.Field == "metadata.namespace" || containsString(res.FieldLabels, req.Field) {
			continue
		}
		return nil, fieldLabelRefused(res, req.Field)
	}
	f.fields = fieldSel
	return f, nil
}

// fieldLabelRefused is the 400 refusing label as res's upstream label
// conversion words it.
func fieldLabelRefused(res *registry.Resource, label string) error {
	switch {
	case res.FieldLabelRefusal != nil:
		return apierrors.NewBadRequest(res.FieldLabelRefusal(label))
	case len(res.FieldLabels) == 0 && !res.StrictFieldLabels:
		return apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only %q, %q", label, "metadata.name", "metadata.namespace"))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", label))
}

// customFieldLabel checks a field selector label of a custom resource as
// upstream's custom resource converter does: metadata.name, then
// metadata.namespace when namespaced, then the version's selectableFields.
func customFieldLabel(res *registry.Resource, label string) error {
	if label == "metadata.name" || res.Namespaced && label == "metadata.namespace" || containsString(res.FieldLabels, label) {
		return nil
	}
	return apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", label))
}

// named is f with its field selector replaced by metadata.name=name, built
// as upstream builds it (fields.OneTermEqualSelector): a name is not parsed
// as a selector, so one with a comma or a backslash selects only itself.
func (f *objectFilter) named(name string) *objectFilter {
	return &objectFilter{labels: f.labels, fields: fields.OneTermEqualSelector("metadata.name", name)}
}

func (f *objectFilter) empty() bool {
	return f.labels.Empty() && f.fields.Empty()
}

func (f *objectFilter) matches(obj runtime.Object) bool {
	m := accessor(obj)
	if !f.labels.Empty() && !f.labels.Matches(labels.Set(m.GetLabels())) {
		return false
	}
	if f.fields.Empty() {
		return true
	}
	return f.fields.Matches(fieldSet(obj, f.fields))
}

// fieldSet returns the values of the fields the selector names.
func fieldSet(obj runtime.Object, sel fields.Selector) fields.Set {
	m := accessor(obj)
	set := fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}
	var content map[string]any
	for _, req := range sel.Requirements() {
		if _, ok := set[req.Field]; ok {
			continue
		}
		if content == nil {
			var err error
			content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			if err != nil {
				return set
			}
		}
		v, found, _ := unstructured.NestedFieldNoCopy(content, strings.Split(req.Field, ".")...)
		if req.Field == "source" && isCoreEvent(obj) {
			set[req.Field] = coreEventSource(content)
			continue
		}
		if found {
			set[req.Field] = fmt.Sprint(v)
		} else {
			set[req.Field] = ""
		}
	}
	return set
}

// isCoreEvent reports whether obj is a core/v1 Event, whose "source" field
// label is not a field of the same path.
func isCoreEvent(obj runtime.Object) bool {
	_, ok := obj.(*corev1.Event)
	return ok
}

// coreEventSource is a core/v1 Event's "source" field label, as upstream's
// event strategy sets it: source.component, else reportingComponent.
func coreEventSource(content map[string]any) string {
	if c, _, _ := unstructured.NestedString(content, "source", "component"); c != "" {
		return c
	}
	c, _, _ := unstructured.NestedString(content, "reportingComponent")
	return c
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
