package registry

import (
	"fmt"
	"reflect"

	admissionregistrationv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// optionalVersions are, for each kind admitd stores (key: its stored version), the
// beta and alpha versions kube-apiserver 1.37 also serves it in when
// --runtime-config turns them on (what it serves under api/all=true),
// in its discovery order. Their Go types have the same fields as the
// stored version's (TestOptionalVersionsHaveStoredShape), so objects
// convert field by field.
//
// Not here, though upstream serves them when asked: LeaseCandidate
// (coordination.k8s.io/v1beta1, v1alpha2) and StorageVersion
// (internal.apiserver.k8s.io/v1alpha1), which admitd does not serve at
// all; resource.k8s.io's v1beta1, v1beta2 and v1alpha3, and
// certificates.k8s.io/v1beta1 PodCertificateRequests (spec.pkixPublicKey
// and spec.proofOfPossession), whose types differ from v1's.
var optionalVersions = map[schema.GroupVersionKind][]string{
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicy"}:        {"v1beta1", "v1alpha1"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicyBinding"}: {"v1beta1", "v1alpha1"},
	{Group: "certificates.k8s.io", Version: "v1", Kind: "ClusterTrustBundle"}:                      {"v1beta1"},
	{Group: "storagemigration.k8s.io", Version: "v1", Kind: "StorageVersionMigration"}:             {"v1beta1"},
}

// optionalDefaults are the defaults of an optional version that its
// stored version lacks, applied before the stored version's: upstream
// defaults an object in the version it was sent in.
var optionalDefaults = map[schema.GroupVersionKind]func(runtime.Object){
	// v1alpha1's ParamRef defaults parameterNotFoundAction to Deny; v1
	// requires it.
	admissionregistrationv1alpha1.SchemeGroupVersion.WithKind("MutatingAdmissionPolicyBinding"): func(obj runtime.Object) {
		if b, ok := obj.(*admissionregistrationv1alpha1.MutatingAdmissionPolicyBinding); ok && b.Spec.ParamRef != nil &&
			b.Spec.ParamRef.ParameterNotFoundAction == nil {
			deny := admissionregistrationv1alpha1.DenyAction
			b.Spec.ParamRef.ParameterNotFoundAction = &deny
		}
	},
}

// addOptionalConversions registers the field-by-field conversions between
// each optional version and its stored version.
func addOptionalConversions(s *runtime.Scheme) {
	for to, versions := range optionalVersions {
		for _, v := range versions {
			from := schema.GroupVersionKind{Group: to.Group, Version: v, Kind: to.Kind}
			a, err := s.New(from)
			utilruntime.Must(err)
			b, err := s.New(to)
			utilruntime.Must(err)
			utilruntime.Must(s.AddConversionFunc(a, b, convertFieldByField))
			utilruntime.Must(s.AddConversionFunc(b, a, convertFieldByField))
		}
	}
}

// convertFieldByField converts between Go types of the same JSON shape.
func convertFieldByField(in, out any, _ conversion.Scope) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(in)
	if err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(content, out)
}

// buildOptional is the catalogue entry of the kind in an optional version:
// the stored version's entry whose strategy works on the object converted
// to the stored version, with the version's deprecation warning.
func (d descriptor) buildOptional(gv schema.GroupVersion) *Resource {
	r := d.buildVersion(gv)
	via := storedForm{own: gv.WithKind(d.kind), stored: d.groupVersion().WithKind(d.kind)}
	r.Strategy = via.strategy(r.Strategy)
	r.Deprecation = deprecationWarning(r.GroupVersionKind())
	return r
}

// storedForm runs a strategy written for the stored version on objects of
// another version: each is converted to the stored version, and what the
// strategy changed is converted back into the object.
type storedForm struct {
	own, stored schema.GroupVersionKind
}

func (v storedForm) toStored(obj runtime.Object) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	return ConvertTo(obj.DeepCopyObject(), v.stored)
}

// apply runs f on obj's stored form and writes the result back into obj.
func (v storedForm) apply(obj runtime.Object, f func(stored runtime.Object)) {
	stored, err := v.toStored(obj)
	if err != nil {
		return
	}
	f(stored)
	back, err := ConvertTo(stored, v.own)
	if err != nil {
		return
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(back).Elem())
}

// pair converts obj and old (nil stays nil) to the stored version.
func (v storedForm) pair(obj, old runtime.Object) (runtime.Object, runtime.Object, error) {
	a, err := v.toStored(obj)
	if err != nil {
		return nil, nil, err
	}
	b, err := v.toStored(old)
	return a, b, err
}

func (v storedForm) failed(err error) field.ErrorList {
	return field.ErrorList{field.InternalError(nil, fmt.Errorf("converting %s to %s: %w", v.own, v.stored, err))}
}

func (v storedForm) strategy(s Strategy) Strategy {
	versionDefault := optionalDefaults[v.own]
	storedDefault := s.Default
	s.Default = func(obj runtime.Object) {
		if versionDefault != nil {
			versionDefault(obj)
		}
		if storedDefault != nil {
			v.apply(obj, storedDefault)
		}
	}
	if f := s.PrepareForCreate; f != nil {
		s.PrepareForCreate = func(obj runtime.Object) { v.apply(obj, f) }
	}
	if f := s.PrepareForCreateBy; f != nil {
		s.PrepareForCreateBy = func(obj runtime.Object, u authenticationv1.UserInfo) {
			v.apply(obj, func(o runtime.Object) { f(o, u) })
		}
	}
	if f := s.PrepareForUpdate; f != nil {
		s.PrepareForUpdate = func(obj, old runtime.Object) { v.applyWithOld(obj, old, f) }
	}
	if f := s.PrepareForSubresourceUpdate; f != nil {
		s.PrepareForSubresourceUpdate = func(sub string, obj, old runtime.Object) {
			v.applyWithOld(obj, old, func(o, p runtime.Object) { f(sub, o, p) })
		}
	}
	s.Validate = v.validate(s.Validate)
	s.ValidateUpdate = v.validateUpdate(s.ValidateUpdate)
	s.Warnings = v.warnings(s.Warnings)
	if f := s.PrepareWarnings; f != nil {
		onCreate := v.warnings(func(obj, _ runtime.Object) []string { return f(obj) })
		s.PrepareWarnings = func(obj runtime.Object) []string { return onCreate(obj, nil) }
	}
	s.Checks = v.checks(s.Checks)
	if f := s.NameFor; f != nil {
		s.NameFor = func(obj runtime.Object) NameValidator {
			stored, err := v.toStored(obj)
			if err != nil {
				return nil
			}
			return f(stored)
		}
	}
	s.Subresources = v.subresources(s.Subresources)
	return s
}

func (v storedForm) applyWithOld(obj, old runtime.Object, f func(obj, old runtime.Object)) {
	storedOld, err := v.toStored(old)
	if err != nil {
		return
	}
	v.apply(obj, func(o runtime.Object) { f(o, storedOld) })
}

func (v storedForm) validate(f func(runtime.Object) field.ErrorList) func(runtime.Object) field.ErrorList {
	if f == nil {
		return nil
	}
	return func(obj runtime.Object) field.ErrorList {
		stored, err := v.toStored(obj)
		if err != nil {
			return v.failed(err)
		}
		return f(stored)
	}
}

func (v storedForm) validateUpdate(f func(obj, old runtime.Object) field.ErrorList) func(obj, old runtime.Object) field.ErrorList {
	if f == nil {
		return nil
	}
	return func(obj, old runtime.Object) field.ErrorList {
		a, b, err := v.pair(obj, old)
		if err != nil {
			return v.failed(err)
		}
		return f(a, b)
	}
}

func (v storedForm) warnings(f func(obj, old runtime.Object) []string) func(obj, old runtime.Object) []string {
	if f == nil {
		return nil
	}
	return func(obj, old runtime.Object) []string {
		a, b, err := v.pair(obj, old)
		if err != nil {
			return nil
		}
		return f(a, b)
	}
}

func (v storedForm) checks(f func(obj, old runtime.Object) []Check) func(obj, old runtime.Object) []Check {
	if f == nil {
		return nil
	}
	return func(obj, old runtime.Object) []Check {
		a, b, err := v.pair(obj, old)
		if err != nil {
			return nil
		}
		return f(a, b)
	}
}

// subresources wraps the subresources' strategies as the main one's.
func (v storedForm) subresources(in map[string]SubresourceStrategy) map[string]SubresourceStrategy {
	if in == nil {
		return nil
	}
	out := make(map[string]SubresourceStrategy, len(in))
	for name, sub := range in {
		if f := sub.PrepareForUpdate; f != nil {
			sub.PrepareForUpdate = func(obj, old runtime.Object, g FeatureGates) {
				v.applyWithOld(obj, old, func(o, p runtime.Object) { f(o, p, g) })
			}
		}
		if f := sub.ValidateUpdate; f != nil {
			sub.ValidateUpdate = func(obj, old runtime.Object, g FeatureGates) field.ErrorList {
				a, b, err := v.pair(obj, old)
				if err != nil {
					return v.failed(err)
				}
				return f(a, b, g)
			}
		}
		sub.Warnings = v.warnings(sub.Warnings)
		if f := sub.SignerCheck; f != nil {
			sub.SignerCheck = func(obj, old runtime.Object) *SignerCheck {
				a, b, err := v.pair(obj, old)
				if err != nil {
					return nil
				}
				return f(a, b)
			}
		}
		if f := sub.Checks; f != nil {
			sub.Checks = func(obj, old runtime.Object, g FeatureGates) []Check {
				a, b, err := v.pair(obj, old)
				if err != nil {
					return nil
				}
				return f(a, b, g)
			}
		}
		out[name] = sub
	}
	return out
}

// The release admitd follows, for deprecation warnings.
const currentMajor, currentMinor = 1, 37

// deprecationWarning is upstream's warning for requests of gvk's version
// once its Go type says it is deprecated (k8s.io/api's prerelease
// lifecycle): "<group/version> <Kind> is deprecated in vX.Y+[, unavailable
// in vX.Y+][; use <group/version> <Kind>]"; empty when it is not.
func deprecationWarning(gvk schema.GroupVersionKind) string {
	obj, err := Scheme().New(gvk)
	if err != nil {
		return ""
	}
	deprecated, ok := obj.(interface{ APILifecycleDeprecated() (int, int) })
	if !ok {
		return ""
	}
	major, minor := deprecated.APILifecycleDeprecated()
	if (major == 0 && minor == 0) || major > currentMajor || (major == currentMajor && minor > currentMinor) {
		return ""
	}
	text := fmt.Sprintf("%s %s is deprecated in v%d.%d+", gvk.GroupVersion(), gvk.Kind, major, minor)
	if removed, ok := obj.(interface{ APILifecycleRemoved() (int, int) }); ok {
		if major, minor := removed.APILifecycleRemoved(); major != 0 || minor != 0 {
			text += fmt.Sprintf(", unavailable in v%d.%d+", major, minor)
		}
	}
	if replaced, ok := obj.(interface {
		APILifecycleReplacement() schema.GroupVersionKind
	}); ok {
		if r := replaced.APILifecycleReplacement(); !r.Empty() {
			text += fmt.Sprintf("; use %s %s", r.GroupVersion(), r.Kind)
		}
	}
	return text
}
