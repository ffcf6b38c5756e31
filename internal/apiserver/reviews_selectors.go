package apiserver

import (
	"errors"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// fieldRequirements reads the field selector of an access review, raw or
// as requirements. Requirements that cannot be expressed are left out and
// reported in the error; the others are still returned.
func fieldRequirements(fs *authorizationv1.FieldSelectorAttributes) (fields.Requirements, error) {
	if len(fs.Requirements) == 0 {
		if fs.RawSelector == "" {
			return nil, nil
		}
		sel, err := fields.ParseSelector(fs.RawSelector)
		if err != nil {
			return nil, err
		}
		return sel.Requirements(), nil
	}
	var reqs fields.Requirements
	var errs []error
	for _, r := range fs.Requirements {
		req, err := fieldRequirement(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reqs = append(reqs, req)
	}
	return reqs, errors.Join(errs...)
}

// fieldRequirement maps In and NotIn with one value to = and !=, the only
// field selector operators there are.
func fieldRequirement(r metav1.FieldSelectorRequirement) (fields.Requirement, error) {
	var op selection.Operator
	switch r.Operator {
	case metav1.FieldSelectorOpIn:
		op = selection.Equals
	case metav1.FieldSelectorOpNotIn:
		op = selection.NotEquals
	case metav1.FieldSelectorOpExists, metav1.FieldSelectorOpDoesNotExist:
		return fields.Requirement{}, fmt.Errorf("field selector operator %v is not supported", r.Operator)
	default:
		return fields.Requirement{}, fmt.Errorf("unknown field selector operator %q", r.Operator)
	}
	if len(r.Values) != 1 {
		return fields.Requirement{}, fmt.Errorf("field selector operator %v needs exactly one value", r.Operator)
	}
	return fields.Requirement{Field: r.Key, Operator: op, Value: r.Values[0]}, nil
}

var labelOperators = map[metav1.LabelSelectorOperator]selection.Operator{
	metav1.LabelSelectorOpIn:           selection.In,
	metav1.LabelSelectorOpNotIn:        selection.NotIn,
	metav1.LabelSelectorOpExists:       selection.Exists,
	metav1.LabelSelectorOpDoesNotExist: selection.DoesNotExist,
}

// labelRequirements reads the label selector of an access review, raw or
// as requirements, keeping those that are valid.
func labelRequirements(ls *authorizationv1.LabelSelectorAttributes) (labels.Requirements, error) {
	if len(ls.Requirements) == 0 {
		if ls.RawSelector == "" {
			return nil, nil
		}
		sel, err := labels.Parse(ls.RawSelector)
		if err != nil {
			return nil, err
		}
		reqs, _ := sel.Requirements()
		return reqs, nil
	}
	var reqs labels.Requirements
	var errs []error
	for _, r := range ls.Requirements {
		op, ok := labelOperators[r.Operator]
		if !ok {
			errs = append(errs, fmt.Errorf("unknown label selector operator %q", r.Operator))
			continue
		}
		values := r.Values
		if len(values) == 0 {
			values = nil
		}
		req, err := labels.NewRequirement(r.Key, op, values)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reqs = append(reqs, *req)
	}
	return reqs, errors.Join(errs...)
}
