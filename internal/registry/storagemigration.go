package registry

import (
	"strings"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// StorageVersionMigration, the one kind of storagemigration.k8s.io/v1, as
// kube-apiserver 1.37 serves it (pkg/registry/storagemigration, on by
// default with the StorageVersionMigrator gate, GA in 1.37):
// cluster-scoped, named by a DNS subdomain, with a status subresource and
// no defaults. A create starts from an empty status and a write of the
// main resource keeps the stored one; the spec (the group and resource to
// migrate) never changes. A status write keeps the stored spec and the
// metadata a status strategy resets, and checks only the metadata update
// and the status: a well-formed resourceVersion that once set stays, valid
// conditions, Succeeded and Failed not both True, neither going back once
// True. Errors repeating an earlier message are dropped, as upstream's
// declarative-validation step does (its rules of this kind are all alpha,
// so they add none).
func storagemigrationKinds() []descriptor {
	return []descriptor{
		{gv: "storagemigration.k8s.io/v1", resource: "storageversionmigrations", kind: "StorageVersionMigration",
			name: apivalidation.NameIsDNSSubdomain, status: statusReset, strategy: storageVersionMigrationStrategy()},
	}
}

var (
	svmResourceFld   = specPath.Child("resource")
	svmStatusFld     = field.NewPath("status")
	svmConditionsFld = svmStatusFld.Child("conditions")
)

func storageVersionMigrationStrategy() Strategy {
	return Strategy{
		Validate: func(obj runtime.Object) field.ErrorList {
			return uniqueMessages(validateMigrationSpec(&obj.(*storagemigrationv1.StorageVersionMigration).Spec))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			m, was := obj.(*storagemigrationv1.StorageVersionMigration), old.(*storagemigrationv1.StorageVersionMigration)
			// Upstream checks the whole object as new, then the metadata
			// update (which the server checks first here), then the spec
			// for change; a message already reported is dropped.
			errs := withoutMessagesOf(ValidateObjectMeta(m, false, apivalidation.NameIsDNSSubdomain), ValidateObjectMetaUpdate(obj, old))
			errs = append(errs, validateMigrationSpec(&m.Spec)...)
			if !apiequality.Semantic.DeepEqual(m.Spec, was.Spec) {
				errs = append(errs, field.Invalid(specPath, internalJSON(m.Spec), fieldImmutable))
			}
			return uniqueMessages(errs)
		},
		Subresources: map[string]SubresourceStrategy{"status": {
			PrepareForUpdate: func(obj, old runtime.Object, _ FeatureGates) {
				m, was := obj.(*storagemigrationv1.StorageVersionMigration), old.(*storagemigrationv1.StorageVersionMigration)
				m.Spec = *was.Spec.DeepCopy()
				metav1.ResetObjectMetaForStatus(&m.ObjectMeta, &was.ObjectMeta)
			},
			ValidateUpdate: func(obj, old runtime.Object, _ FeatureGates) field.ErrorList {
				m, was := obj.(*storagemigrationv1.StorageVersionMigration), old.(*storagemigrationv1.StorageVersionMigration)
				return uniqueMessages(append(ValidateObjectMetaUpdate(obj, old), validateMigrationStatus(&m.Status, &was.Status)...))
			},
		}},
	}
}

// validateMigrationSpec: a resource is required and a DNS-1035 label; a
// group, when given, a DNS-1123 subdomain (each with its rule's messages
// joined by commas).
func validateMigrationSpec(s *storagemigrationv1.StorageVersionMigrationSpec) field.ErrorList {
	var errs field.ErrorList
	if s.Resource.Resource == "" {
		errs = append(errs, field.Required(svmResourceFld.Child("resource"), "resource is required to be set"))
	} else if msgs := validation.IsDNS1035Label(s.Resource.Resource); len(msgs) > 0 {
		errs = append(errs, field.Invalid(svmResourceFld.Child("resource"), s.Resource.Resource, strings.Join(msgs, ",")))
	}
	if s.Resource.Group != "" {
		if msgs := validation.IsDNS1123Subdomain(s.Resource.Group); len(msgs) > 0 {
			errs = append(errs, field.Invalid(svmResourceFld.Child("group"), s.Resource.Group, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// validateMigrationStatus checks a status write of old into st.
func validateMigrationStatus(st, old *storagemigrationv1.StorageVersionMigrationStatus) field.ErrorList {
	var errs field.ErrorList
	rvFld := svmStatusFld.Child("resourceVersion")
	if rv := st.ResourceVersion; rv != "" {
		if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
			errs = append(errs, field.Invalid(rvFld, rv, err.Error()))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(st.Conditions, svmConditionsFld)...)
	if old.ResourceVersion != "" && old.ResourceVersion != st.ResourceVersion {
		errs = append(errs, field.Invalid(rvFld, st.ResourceVersion, fieldImmutable))
	}
	succeeded, failed := conditionTrue(st.Conditions, storagemigrationv1.MigrationSucceeded), conditionTrue(st.Conditions, storagemigrationv1.MigrationFailed)
	if succeeded && failed {
		errs = append(errs, field.Invalid(svmConditionsFld, st.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	if conditionTrue(old.Conditions, storagemigrationv1.MigrationSucceeded) && !succeeded {
		errs = append(errs, field.Invalid(svmConditionsFld, st.Conditions, "Success condition cannot be set to false once it is true"))
	}
	if conditionTrue(old.Conditions, storagemigrationv1.MigrationFailed) && !failed {
		errs = append(errs, field.Invalid(svmConditionsFld, st.Conditions, "Failed condition cannot be set to false once it is true"))
	}
	return errs
}

// conditionTrue reports whether the first condition of type t is True.
func conditionTrue(conds []metav1.Condition, t storagemigrationv1.MigrationConditionType) bool {
	c := apimeta.FindStatusCondition(conds, string(t))
	return c != nil && c.Status == metav1.ConditionTrue
}

// withoutMessagesOf is errs less the errors whose message one of seen has.
func withoutMessagesOf(errs, seen field.ErrorList) field.ErrorList {
	if len(errs) == 0 || len(seen) == 0 {
		return errs
	}
	msgs := make(map[string]bool, len(seen))
	for _, e := range seen {
		msgs[e.Error()] = true
	}
	out := errs[:0:0]
	for _, e := range errs {
		if !msgs[e.Error()] {
			out = append(out, e)
		}
	}
	return out
}
