package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PriorityClass validation (upstream ValidatePriorityClass and
// ValidatePriorityClassUpdate).

const (
	// highestUserDefinablePriority: values above are for system classes.
	highestUserDefinablePriority = int32(1000000000)
	systemPriorityClassPrefix    = "system-"
)

// systemPriorityClasses are the only classes whose names may start with
// "system-", each with its value (neither is a global default).
var systemPriorityClasses = map[string]int32{
	"system-cluster-critical": 2 * highestUserDefinablePriority,
	"system-node-critical":    2*highestUserDefinablePriority + 1000,
}

func validatePriorityClass(obj runtime.Object) field.ErrorList {
	pc := obj.(*schedulingv1.PriorityClass)
	var errs field.ErrorList
	if strings.HasPrefix(pc.Name, systemPriorityClassPrefix) {
		if err := knownSystemPriorityClass(pc); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with '"+systemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > highestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", highestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		errs = append(errs, validatePreemptionPolicy(pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	}
	return errs
}

// knownSystemPriorityClass: pc is one of the system classes as it is
// defined, or why not.
func knownSystemPriorityClass(pc *schedulingv1.PriorityClass) error {
	value, ok := systemPriorityClasses[pc.Name]
	switch {
	case !ok:
		return fmt.Errorf("%v is not a known system priority class", pc.Name)
	case pc.Value != value:
		return fmt.Errorf("value of %v PriorityClass must be %v", pc.Name, value)
	case pc.GlobalDefault:
		return fmt.Errorf("globalDefault of %v PriorityClass must be %v", pc.Name, false)
	}
	return nil
}

func validatePreemptionPolicy(p *corev1.PreemptionPolicy, path *field.Path) field.ErrorList {
	switch *p {
	case corev1.PreemptLowerPriority, corev1.PreemptNever:
		return nil
	case "":
		return field.ErrorList{field.Required(path, "")}
	}
	return field.ErrorList{field.NotSupported(path, p, []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever})}
}

// validatePriorityClassUpdate: value and preemption policy never change.
func validatePriorityClassUpdate(obj, old runtime.Object) field.ErrorList {
	pc, was := obj.(*schedulingv1.PriorityClass), old.(*schedulingv1.PriorityClass)
	var errs field.ErrorList
	if pc.Value != was.Value {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	return append(errs, apivalidation.ValidateImmutableField(pc.PreemptionPolicy, was.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}
