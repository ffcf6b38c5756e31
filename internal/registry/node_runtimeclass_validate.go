package registry

import (
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RuntimeClass validation as kube-apiserver 1.37 answers it: upstream's
// ValidateRuntimeClass (a handler that is a DNS label, the overhead as a
// container's limits, the scheduling node selector's labels, its
// tolerations as a pod's and none twice) and, on update, the handler
// immutable. 1.37 enforces the beta declarative rules on the handler
// (required, a short name, immutable): those errors replace the
// handwritten ones they cover and come last. A changed handler is only
// reported immutable (and required when emptied) there, so the
// handwritten format error of a changed handler stays in its place.

var handlerPath = field.NewPath("handler")

func validateRuntimeClass(obj runtime.Object) field.ErrorList {
	rc := obj.(*nodev1.RuntimeClass)
	return withEnforcedDeclarative(runtimeClassErrors(rc), declarativeHandlerErrors(rc, nil))
}

func validateRuntimeClassUpdate(obj, old runtime.Object) field.ErrorList {
	rc, was := obj.(*nodev1.RuntimeClass), old.(*nodev1.RuntimeClass)
	errs := runtimeClassErrors(rc)
	if rc.Handler != was.Handler {
		errs = append(errs, field.Invalid(handlerPath, rc.Handler, apivalidation.FieldImmutableErrorMsg).WithOrigin("immutable").MarkCoveredByDeclarative())
	}
	return withEnforcedDeclarative(errs, declarativeHandlerErrors(rc, was))
}

func runtimeClassErrors(rc *nodev1.RuntimeClass) field.ErrorList {
	var errs field.ErrorList
	if rc.Handler == "" {
		errs = append(errs, field.Required(handlerPath, "").MarkCoveredByDeclarative())
	} else {
		errs = append(errs, handlerNameErrors(rc.Handler)...)
	}
	if rc.Overhead != nil {
		errs = append(errs, validateResourceRequirements(&corev1.ResourceRequirements{Limits: rc.Overhead.PodFixed}, nil, field.NewPath("overhead"))...)
	}
	if s := rc.Scheduling; s != nil {
		p := field.NewPath("scheduling")
		if s.NodeSelector != nil {
			errs = append(errs, metav1validation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
		}
		errs = append(errs, validateTolerations(s.Tolerations, p.Child("tolerations"))...)
		errs = append(errs, repeatedTolerations(s.Tolerations, p.Child("tolerations"))...)
	}
	return errs
}

func handlerNameErrors(handler string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSLabel(handler, false) {
		errs = append(errs, field.Invalid(handlerPath, handler, msg).WithOrigin("format=k8s-short-name").MarkCoveredByDeclarative())
	}
	return errs
}

// declarativeHandlerErrors are the enforced beta rules on the handler (old
// nil on create): nothing when unchanged; immutable when changed, and
// required when empty, both before (and then instead of) the format.
func declarativeHandlerErrors(rc, old *nodev1.RuntimeClass) field.ErrorList {
	var errs field.ErrorList
	switch {
	case old != nil && rc.Handler == old.Handler:
		return nil
	case old != nil:
		errs = append(errs, field.Invalid(handlerPath, nil, apivalidation.FieldImmutableErrorMsg).WithOrigin("immutable"))
	}
	if rc.Handler == "" {
		errs = append(errs, field.Required(handlerPath, ""))
	}
	if len(errs) == 0 {
		// The declarative rule words the length limit in bytes.
		for _, msg := range content.IsDNS1123Label(rc.Handler) {
			errs = append(errs, field.Invalid(handlerPath, rc.Handler, msg).WithOrigin("format=k8s-short-name"))
		}
	}
	return errs.MarkBeta()
}

// repeatedTolerations: no toleration twice (its seconds aside).
func repeatedTolerations(tolerations []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[corev1.Toleration]bool{}
	for i, t := range tolerations {
		key := corev1.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect}
		if seen[key] {
			errs = append(errs, field.Duplicate(p.Index(i), internalToleration(t)))
		}
		seen[key] = true
	}
	return errs
}

// internalTolerationValue has the shape of upstream's internal Toleration
// (no json tags), so a repeated one renders in errors as upstream's.
type internalTolerationValue struct {
	Key               string
	Operator          corev1.TolerationOperator
	Value             string
	Effect            corev1.TaintEffect
	TolerationSeconds *int64
}

func internalToleration(t corev1.Toleration) internalTolerationValue {
	return internalTolerationValue{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect, TolerationSeconds: t.TolerationSeconds}
}
