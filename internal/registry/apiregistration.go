package registry

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// APIService, the one kind of apiregistration.k8s.io/v1, as kube-aggregator
// 0.37 serves it (pkg/registry/apiservice): cluster-scoped, in category
// api-extensions, with a status subresource. A create starts from an empty
// status, and a Local APIService (no service) is Available at once. Its
// name must be "<version>.<group>"; a Local one may not carry a CA bundle
// nor skip TLS verification. A status write keeps the spec, labels,
// annotations, finalizers and owner references.
func apiregistrationKinds() []descriptor {
	return []descriptor{
		{gv: "apiregistration.k8s.io/v1", resource: "apiservices", kind: "APIService", categories: []string{"api-extensions"},
			status: statusReset, strategy: apiServiceStrategy()},
	}
}

var (
	groupPriorityFld = specPath.Child("groupPriorityMinimum")
	servicePath      = specPath.Child("service")
)

// The Available condition of a Local APIService, as upstream's
// NewLocalAvailableAPIServiceCondition.
const (
	LocalAvailableReason  = "Local"
	LocalAvailableMessage = "Local APIServices are always available"
)

func apiServiceStrategy() Strategy {
	return Strategy{
		Default: func(obj runtime.Object) {
			if svc := obj.(*apiregistrationv1.APIService).Spec.Service; svc != nil && svc.Port == nil {
				port := int32(443)
				svc.Port = &port
			}
		},
		PrepareForCreate: func(obj runtime.Object) {
			s := obj.(*apiregistrationv1.APIService)
			if s.Spec.Service == nil {
				s.Status.Conditions = []apiregistrationv1.APIServiceCondition{{
					Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue, LastTransitionTime: metav1.Now(),
					Reason: LocalAvailableReason, Message: LocalAvailableMessage,
				}}
			}
		},
		Subresources: map[string]SubresourceStrategy{"status": apiServiceStatusStrategy()},
		NameFor: func(obj runtime.Object) NameValidator {
			return apiServiceName(obj.(*apiregistrationv1.APIService))
		},
		Validate: func(obj runtime.Object) field.ErrorList {
			return validateAPIServiceSpec(obj.(*apiregistrationv1.APIService))
		},
		ValidateUpdate: func(obj, _ runtime.Object) field.ErrorList {
			// Upstream checks the whole object as new after the update
			// rules.
			s := obj.(*apiregistrationv1.APIService)
			return append(ValidateObjectMeta(s, false, apiServiceName(s)), validateAPIServiceSpec(s)...)
		},
	}
}

// apiServiceStatusStrategy is upstream's status strategy: a status write
// keeps the stored spec, labels, annotations, finalizers and owner
// references, and checks only the metadata update and the conditions.
func apiServiceStatusStrategy() SubresourceStrategy {
	return SubresourceStrategy{
		PrepareForUpdate: func(obj, old runtime.Object, _ FeatureGates) {
			s, was := obj.(*apiregistrationv1.APIService), old.(*apiregistrationv1.APIService)
			s.Spec = *was.Spec.DeepCopy()
			s.Labels, s.Annotations, s.Finalizers, s.OwnerReferences = was.Labels, was.Annotations, was.Finalizers, was.OwnerReferences
		},
		ValidateUpdate: func(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
			return append(ValidateObjectMetaUpdate(obj, old), validateAPIServiceStatus(&obj.(*apiregistrationv1.APIService).Status)...)
		},
	}
}

// apiServiceName is the name rule of s: a path segment, and exactly
// spec.version + "." + spec.group (generateName is held to the same).
func apiServiceName(s *apiregistrationv1.APIService) NameValidator {
	want := s.Spec.Version + "." + s.Spec.Group
	return func(name string, _ bool) []string {
		if errs := content.IsPathSegmentName(name); len(errs) > 0 {
			return errs
		}
		if name != want {
			return []string{fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", want)}
		}
		return nil
	}
}

// validateAPIServiceSpec is upstream's ValidateAPIService without the
// metadata.
func validateAPIServiceSpec(s *apiregistrationv1.APIService) field.ErrorList {
	var errs field.ErrorList
	spec := &s.Spec
	if spec.Group == "" && spec.Version != "v1" {
		errs = append(errs, field.Required(specPath.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if spec.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(spec.Group) {
			errs = append(errs, field.Invalid(specPath.Child("group"), spec.Group, msg))
		}
	}
	for _, msg := range validation.IsDNS1035Label(spec.Version) {
		errs = append(errs, field.Invalid(specPath.Child("version"), spec.Version, msg))
	}
	if spec.GroupPriorityMinimum <= 0 || spec.GroupPriorityMinimum > 20000 {
		errs = append(errs, field.Invalid(groupPriorityFld, spec.GroupPriorityMinimum, "must be positive and less than 20000"))
	}
	if spec.VersionPriority <= 0 || spec.VersionPriority > 1000 {
		errs = append(errs, field.Invalid(specPath.Child("versionPriority"), spec.VersionPriority, "must be positive and less than 1000"))
	}
	insecure := specPath.Child("insecureSkipTLSVerify")
	if spec.Service == nil {
		if len(spec.CABundle) != 0 {
			errs = append(errs, field.Invalid(specPath.Child("caBundle"), fmt.Sprintf("%d bytes", len(spec.CABundle)), "local APIServices may not have a caBundle"))
		}
		if spec.InsecureSkipTLSVerify {
			errs = append(errs, field.Invalid(insecure, true, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return errs
	}
	if spec.Service.Namespace == "" {
		errs = append(errs, field.Required(servicePath.Child("namespace"), ""))
	}
	if spec.Service.Name == "" {
		errs = append(errs, field.Required(servicePath.Child("name"), ""))
	}
	port := int32(0)
	if spec.Service.Port != nil {
		port = *spec.Service.Port
	}
	if msgs := validation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(servicePath.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if spec.InsecureSkipTLSVerify && len(spec.CABundle) > 0 {
		errs = append(errs, field.Invalid(insecure, true, "may not be true if caBundle is present"))
	}
	return errs
}

// validateAPIServiceStatus: every condition's status is True, False or
// Unknown.
func validateAPIServiceStatus(st *apiregistrationv1.APIServiceStatus) field.ErrorList {
	var errs field.ErrorList
	for i, c := range st.Conditions {
		switch c.Status {
		case apiregistrationv1.ConditionTrue, apiregistrationv1.ConditionFalse, apiregistrationv1.ConditionUnknown:
		default:
			errs = append(errs, field.NotSupported(field.NewPath("status", "conditions").Index(i).Child("status"), c.Status,
				[]string{string(apiregistrationv1.ConditionTrue), string(apiregistrationv1.ConditionFalse), string(apiregistrationv1.ConditionUnknown)}))
		}
	}
	return errs
}
