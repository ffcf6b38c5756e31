package registry

import (
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Lease validation and preparation as kube-apiserver 1.37's lease
// strategy: upstream's ValidateLease and ValidateLeaseUpdate (a positive
// duration, transitions not negative, a known or qualified strategy, a
// preferred holder only with a strategy). The strategy and preferred
// holder belong to CoordinatedLeaderElection, off by default in 1.37: a
// create drops them, an update keeps only those already stored. Upstream
// reports a bad strategy under spec.strategy.strategy, which admitd keeps.

const gateCoordinatedLeaderElection = "CoordinatedLeaderElection"

var leaseStrategies = []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion}

func validateLease(obj runtime.Object) field.ErrorList {
	return withEnforcedDeclarative(leaseSpecErrors(&obj.(*coordinationv1.Lease).Spec), nil)
}

func validateLeaseUpdate(obj, _ runtime.Object) field.ErrorList {
	return validateLease(obj)
}

func leaseSpecErrors(spec *coordinationv1.LeaseSpec) field.ErrorList {
	var errs field.ErrorList
	if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(specPath.Child("leaseDurationSeconds"), d, "must be greater than 0"))
	}
	if n := spec.LeaseTransitions; n != nil && *n < 0 {
		errs = append(errs, field.Invalid(specPath.Child("leaseTransitions"), n, "must be greater than or equal to 0"))
	}
	if spec.Strategy != nil {
		errs = append(errs, leaseStrategyErrors(*spec.Strategy, specPath.Child("strategy", "strategy"))...)
	}
	if h := spec.PreferredHolder; h != nil && *h != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		errs = append(errs, field.Forbidden(specPath.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}

// leaseStrategyErrors: a name without a slash is one of Kubernetes'
// strategies; others are qualified names.
func leaseStrategyErrors(s coordinationv1.CoordinatedLeaseStrategy, p *field.Path) field.ErrorList {
	if !strings.Contains(string(s), "/") {
		if !slices.Contains(leaseStrategies, s) {
			return field.ErrorList{field.NotSupported(p, s, leaseStrategies)}
		}
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(s)) {
		errs = append(errs, field.Invalid(p, s, msg))
	}
	return errs
}

func prepareLeaseForCreate(obj runtime.Object) {
	if !(defaultGates{}).Enabled(gateCoordinatedLeaderElection) {
		spec := &obj.(*coordinationv1.Lease).Spec
		spec.Strategy, spec.PreferredHolder = nil, nil
	}
}

func prepareLeaseForUpdate(obj, old runtime.Object) {
	if (defaultGates{}).Enabled(gateCoordinatedLeaderElection) {
		return
	}
	spec, was := &obj.(*coordinationv1.Lease).Spec, &old.(*coordinationv1.Lease).Spec
	if was.Strategy == nil {
		spec.Strategy = nil
	}
	if was.PreferredHolder == nil {
		spec.PreferredHolder = nil
	}
}
