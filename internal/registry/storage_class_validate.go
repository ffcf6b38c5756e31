package registry

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// StorageClass validation as kube-apiserver 1.37 answers it: upstream's
// ValidateStorageClass, with the errors its declarative validation
// enforces (a missing provisioner; the immutable fields of an update,
// without their values) in their place, after the others.

var (
	supportedStorageClassReclaimPolicies = []string{string(corev1.PersistentVolumeReclaimDelete), string(corev1.PersistentVolumeReclaimRetain)}
	supportedVolumeBindingModes          = []string{string(storagev1.VolumeBindingImmediate), string(storagev1.VolumeBindingWaitForFirstConsumer)}
)

func validateStorageClass(obj runtime.Object) field.ErrorList {
	sc := obj.(*storagev1.StorageClass)
	var errs field.ErrorList
	if sc.Provisioner != "" {
		lower := strings.ToLower(sc.Provisioner)
		for _, msg := range validation.IsQualifiedName(lower) {
			errs = append(errs, field.Invalid(field.NewPath("provisioner"), lower, msg))
		}
	}
	errs = append(errs, validateClassParameters(sc.Parameters, true)...)
	if p := sc.ReclaimPolicy; p != nil && *p != "" && *p != corev1.PersistentVolumeReclaimDelete && *p != corev1.PersistentVolumeReclaimRetain {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), p, supportedStorageClassReclaimPolicies))
	}
	switch m := sc.VolumeBindingMode; {
	case m == nil:
		errs = append(errs, field.Required(field.NewPath("volumeBindingMode"), ""))
	case *m != storagev1.VolumeBindingImmediate && *m != storagev1.VolumeBindingWaitForFirstConsumer:
		errs = append(errs, field.NotSupported(field.NewPath("volumeBindingMode"), m, supportedVolumeBindingModes))
	}
	errs = append(errs, validateAllowedTopologies(sc.AllowedTopologies, field.NewPath("allowedTopologies"))...)
	if sc.Provisioner == "" {
		errs = append(errs, field.Required(field.NewPath("provisioner"), ""))
	}
	return errs
}

// validateStorageClassUpdate: provisioner, parameters, reclaim policy and
// binding mode never change.
func validateStorageClassUpdate(obj, old runtime.Object) field.ErrorList {
	sc, was := obj.(*storagev1.StorageClass), old.(*storagev1.StorageClass)
	var errs field.ErrorList
	for _, f := range []struct {
		name     string
		cur, old any
	}{
		{"provisioner", sc.Provisioner, was.Provisioner}, {"parameters", sc.Parameters, was.Parameters},
		{"reclaimPolicy", sc.ReclaimPolicy, was.ReclaimPolicy}, {"volumeBindingMode", sc.VolumeBindingMode, was.VolumeBindingMode},
	} {
		if !apiequality.Semantic.DeepEqual(f.cur, f.old) {
			errs = append(errs, field.Invalid(field.NewPath(f.name), nil, apivalidation.FieldImmutableErrorMsg))
		}
	}
	return errs
}

// validateAllowedTopologies checks each term, and that no term repeats an
// earlier one. As upstream's, a term with no expressions counts as a
// repeat: its list of earlier terms starts with as many empty ones as
// there are terms.
func validateAllowedTopologies(terms []corev1.TopologySelectorTerm, p *field.Path) field.ErrorList {
	if len(terms) == 0 {
		return nil
	}
	var errs field.ErrorList
	seen := make([]map[string]sets.Set[string], len(terms))
	for i, term := range terms {
		exprs, termErrs := validateTopologySelectorTerm(term, p.Index(i))
		errs = append(errs, termErrs...)
		for _, earlier := range seen {
			if apiequality.Semantic.DeepEqual(exprs, earlier) {
				errs = append(errs, field.Duplicate(p.Index(i).Child("matchLabelExpressions"), ""))
			}
		}
		seen = append(seen, exprs)
	}
	return errs
}

// validateTopologySelectorTerm checks a term's expressions (values given,
// none twice, keys label names, no key twice) and returns its values by
// key.
func validateTopologySelectorTerm(term corev1.TopologySelectorTerm, p *field.Path) (map[string]sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	exprs := map[string]sets.Set[string]{}
	for i, req := range term.MatchLabelExpressions {
		ip := p.Child("matchLabelExpressions").Index(i)
		values := sets.Set[string]{}
		if len(req.Values) == 0 {
			errs = append(errs, field.Required(ip.Child("values"), ""))
		}
		for j, v := range req.Values {
			if values.Has(v) {
				errs = append(errs, field.Duplicate(ip.Child("values").Index(j), v))
			}
			values.Insert(v)
		}
		errs = append(errs, metav1validation.ValidateLabelName(req.Key, ip.Child("key"))...)
		if _, dup := exprs[req.Key]; dup {
			errs = append(errs, field.Duplicate(ip.Child("key"), req.Key))
		}
		exprs[req.Key] = values
	}
	return exprs, errs
}
