package registry

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The per-kind steps of a write, in the order the server runs them:
//
//	res.Default(obj)              on decoding, before mutating admission
//	PrepareCreate(res, obj)       after mutating admission: PrepareForCreate, then ValidateNew
//	PrepareUpdate(res, obj, old)  the same for an update of the main resource
//
// then validating admission and storage. An update through the server runs
// PrepareUpdate's two halves itself (PrepareForUpdate with the subresource
// written, then ValidateChange), because it settles managedFields
// timestamps against the prepared object in between. Tests that need "what
// the server would refuse" call these rather than the Strategy funcs one by
// one.

// Default applies the kind's defaulting, if any.
func (r *Resource) Default(obj runtime.Object) {
	if r.Strategy.Default != nil {
		r.Strategy.Default(obj)
	}
}

// PrepareCreate prepares a new object and validates it.
func PrepareCreate(r *Resource, obj runtime.Object) field.ErrorList {
	PrepareForCreate(r, obj)
	return r.ValidateNew(obj)
}

// PrepareUpdate prepares an update of the main resource and validates it.
func PrepareUpdate(r *Resource, obj, old runtime.Object) field.ErrorList {
	obj = PrepareForUpdate(r, "", obj, old)
	return r.ValidateChange(obj, old)
}

// PrepareForCreate sets what a create owns: generation 1 for kinds that track
// it, an empty status under ClearStatusOnCreate, then the kind's own
// PrepareForCreate.
func PrepareForCreate(r *Resource, obj runtime.Object) {
	if r.TracksGeneration {
		objectMeta(obj).SetGeneration(1)
	}
	if r.ClearStatusOnCreate {
		clearStatus(obj)
	}
	if r.Strategy.PrepareForCreate != nil {
		r.Strategy.PrepareForCreate(obj)
	}
}

// PrepareForUpdate applies the subresource's own preparation, or else the
// status rule and the kind's preparation, to an
// update of old into obj through subresource ("" for the main resource) and
// returns the object to validate and store. A status write keeps only the
// new status (and the request's resourceVersion and managedFields); a write
// of the main resource of a kind with a status subresource keeps the old
// status, then runs the kind's PrepareForUpdate. Generation grows when
// anything outside metadata and status changed. Metadata the server owns
// (uid, creation and deletion fields, generation) must already be old's.
func PrepareForUpdate(r *Resource, subresource string, obj, old runtime.Object) runtime.Object {
	sub := r.Strategy.Subresources[subresource]
	ownStrategy := sub.PrepareForUpdate != nil
	switch {
	case ownStrategy:
		sub.PrepareForUpdate(obj, old, r.gates())
	case subresource == "status":
		obj = statusUpdate(r, old, obj)
	case subresource == "":
		if r.StatusSubresource {
			copyStatus(obj, old)
		}
		if r.Strategy.PrepareForUpdate != nil {
			r.Strategy.PrepareForUpdate(obj, old)
		}
	}
	if subresource != "" && !ownStrategy && r.Strategy.PrepareForSubresourceUpdate != nil {
		r.Strategy.PrepareForSubresourceUpdate(subresource, obj, old)
	}
	if r.TracksGeneration && specChanged(obj, old) {
		objectMeta(obj).SetGeneration(objectMeta(old).GetGeneration() + 1)
	}
	return obj
}

// statusUpdate is the object a status-subresource write produces, as
// upstream's status strategies: for a built-in kind, the old object with
// the new status and the new metadata less what the kind's
// ResetStatusMetadata puts back; for a custom resource, the old object
// with the new status only.
func statusUpdate(r *Resource, old, obj runtime.Object) runtime.Object {
	out := old.DeepCopyObject()
	copyStatus(out, obj)
	m := objectMeta(obj)
	if !r.Unstructured && copyObjectMeta(out, obj) {
		if r.Strategy.ResetStatusMetadata != nil {
			r.Strategy.ResetStatusMetadata(objectMeta(out), objectMeta(old))
		}
		return out
	}
	objectMeta(out).SetResourceVersion(m.GetResourceVersion())
	objectMeta(out).SetManagedFields(m.GetManagedFields())
	return out
}

// resetStatusMetadataAll puts back the metadata upstream's
// ResetObjectMetaForStatus does: labels, annotations, finalizers, owner
// references, deletion timestamp and generation.
func resetStatusMetadataAll(obj, old metav1.Object) {
	metav1.ResetObjectMetaForStatus(obj, old)
}

// resetStatusLabels is the Deployment rule: its status strategy keeps the
// old labels.
func resetStatusLabels(obj, old metav1.Object) { obj.SetLabels(old.GetLabels()) }

// resetStatusOwners is the Pod rule: its status strategy keeps the old
// owner references (and the deletion timestamp, which every update keeps).
func resetStatusOwners(obj, old metav1.Object) { obj.SetOwnerReferences(old.GetOwnerReferences()) }

// objectMeta is obj's metadata; every object the catalogue serves has some.
func objectMeta(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("object without metadata: %T", obj))
	}
	return m
}

// NameValidator checks an object name (or a generateName prefix).
type NameValidator = func(name string, prefix bool) []string

// ValidateNew checks an object about to be created: metadata first, then
// the kind's own rules.
func (r *Resource) ValidateNew(obj runtime.Object) field.ErrorList {
	name := r.nameValidator()
	if r.Strategy.NameFor != nil {
		name = r.Strategy.NameFor(obj)
	}
	if r.Strategy.GenericMetadata {
		return r.applyPolicy(r.validateNewGeneric(obj))
	}
	errs := ValidateObjectMeta(obj, r.Namespaced, name)
	if r.Strategy.Validate != nil {
		errs = append(errs, r.Strategy.Validate(obj)...)
	}
	return r.applyPolicy(errs)
}

// ValidateChange checks an update of old into obj.
func (r *Resource) ValidateChange(obj, old runtime.Object) field.ErrorList {
	if r.Strategy.GenericMetadata {
		return r.applyPolicy(r.validateChangeGeneric(obj, old))
	}
	errs := ValidateObjectMetaUpdate(obj, old)
	if r.Strategy.ValidateUpdate != nil {
		errs = append(errs, r.Strategy.ValidateUpdate(obj, old)...)
	}
	return r.applyPolicy(errs)
}

// validateNewGeneric checks a new object of a GenericMetadata kind: its
// own rules, then, only when they pass, the common metadata checks; errors
// whose message repeats are dropped, as declarative validation does.
func (r *Resource) validateNewGeneric(obj runtime.Object) field.ErrorList {
	errs := r.Strategy.Validate(obj)
	if len(errs) == 0 {
		errs = commonObjectMeta(obj, r.Namespaced)
	}
	return uniqueMessages(errs)
}

// validateChangeGeneric checks an update of a GenericMetadata kind: the
// common metadata checks (of the new metadata and of its change), then
// the kind's own rules.
func (r *Resource) validateChangeGeneric(obj, old runtime.Object) field.ErrorList {
	errs := append(commonObjectMeta(obj, r.Namespaced), commonObjectMetaUpdate(obj, old)...)
	return uniqueMessages(append(errs, r.Strategy.ValidateUpdate(obj, old)...))
}

// ValidateSubresourceChange checks an update of old into obj through
// subresource ("" for the main resource): with the subresource's own
// strategy when it has one, else as ValidateChange.
func (r *Resource) ValidateSubresourceChange(subresource string, obj, old runtime.Object) field.ErrorList {
	sub, ok := r.Strategy.Subresources[subresource]
	if !ok || sub.ValidateUpdate == nil {
		return r.ValidateChange(obj, old)
	}
	return r.applyPolicy(sub.ValidateUpdate(obj, old, r.gates()))
}

// privilegedDisallowed is the error every privileged container gets from
// validation; applyPolicy drops it when the cluster allows privileged
// containers. Reporting it always and dropping it after keeps its place
// among the other errors of the object, where upstream reports it.
const privilegedDisallowed = "disallowed by cluster policy"

// applyPolicy removes from errs what the cluster policy allows.
func (r *Resource) applyPolicy(errs field.ErrorList) field.ErrorList {
	if r.policy == nil || !r.policy.allowPrivileged.Load() {
		return errs
	}
	out := errs[:0]
	for _, e := range errs {
		if e.Type == field.ErrorTypeForbidden && e.Detail == privilegedDisallowed && strings.HasSuffix(e.Field, ".securityContext.privileged") {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Warnings are the client warnings of a validated write of the main
// resource (old is nil on create): the strategy's, then its lint
// findings.
func (r *Resource) Warnings(obj, old runtime.Object) []string {
	var w []string
	if r.Strategy.Warnings != nil {
		w = r.Strategy.Warnings(obj, old)
	}
	if r.Strategy.LintWarnings != nil {
		w = append(w, r.Strategy.LintWarnings(obj, r.policySchemas())...)
	}
	return w
}

// UpdateWarnings are the client warnings of a validated update through
// subresource ("" for the main resource). A scale write warns as the main
// resource, since upstream scales through the kind's own strategy; other
// subresources warn by their own strategy's Warnings, if any.
func (r *Resource) UpdateWarnings(subresource string, obj, old runtime.Object) []string {
	if subresource == "" || subresource == "scale" {
		return r.Warnings(obj, old)
	}
	if f := r.Strategy.Subresources[subresource].Warnings; f != nil {
		return f(obj, old)
	}
	return nil
}

// PrepareWarnings are the client warnings of a create's preparation, from
// the object before PrepareForCreate.
func (r *Resource) PrepareWarnings(obj runtime.Object) []string {
	if r.Strategy.PrepareWarnings == nil {
		return nil
	}
	return r.Strategy.PrepareWarnings(obj)
}

// nameValidator returns the name rule of the resource's kind.
func (r *Resource) nameValidator() NameValidator {
	if r.NameValidator != nil {
		return r.NameValidator
	}
	return NameRule(r.GroupVersionKind().GroupKind())
}
