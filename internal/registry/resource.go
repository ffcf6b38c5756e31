// Package registry is admitd's resource catalogue: for every served
// group/version/resource it knows the kind, scope, names, subresources, and
// the per-kind behaviour the API server applies around admission (defaulting,
// preparation for create and update, validation).
//
// Each built-in kind is one descriptor (descriptor.go), listed in its
// group's file (core.go, core_pods.go, apps.go, batch.go, autoscaling.go,
// admissionregistration.go, apiextensions.go, flowcontrol.go, storage.go, dra.go,
// storagemigration.go, other_kinds.go) next to the <group>[_<kind>]_defaults/_prepare/_validate.go
// files of its strategy;
// admissionregistration's strategy is pkg/apis/admissionregistration, which
// admission plugins share. Custom resources are built from their definitions
// (crd.go). pipeline.go holds the steps a write runs through (Default,
// PrepareCreate, PrepareUpdate) with the generic status rule (status.go).
//
// It holds no objects; storage and the REST verbs live in internal/apiserver.
package registry

import (
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/pkg/lint"
)

// Subresource describes one subresource of a resource, e.g. "status".
type Subresource struct {
	Name string
	// Kind is the kind a client sends and receives on the subresource.
	Kind  schema.GroupVersionKind
	Verbs []string
}

// SubresourceStrategy is how an update through one subresource is prepared
// and validated, in place of the kind's own PrepareForUpdate and
// ValidateUpdate (and of the status rule). gates are the server's feature
// gates.
type SubresourceStrategy struct {
	// PrepareForUpdate keeps what the subresource may change and takes
	// everything else from old; nil: the status rule and the kind's
	// PrepareForSubresourceUpdate.
	PrepareForUpdate func(obj, old runtime.Object, gates FeatureGates)
	// ValidateUpdate checks the update, metadata included.
	ValidateUpdate func(obj, old runtime.Object, gates FeatureGates) field.ErrorList
	// SignerCheck, when set, is the signer authorization a valid update
	// still needs, nil for none (a PodCertificateRequest status write that
	// changes the status: "sign").
	SignerCheck func(obj, old runtime.Object) *SignerCheck
	// Checks, when set, are what a valid update still needs of the
	// cluster (Check), in place of the kind's Strategy.Checks.
	Checks func(obj, old runtime.Object, gates FeatureGates) []Check
	// Warnings are the client warnings of a valid update through the
	// subresource (upstream's status strategies' WarningsOnUpdate); nil:
	// none.
	Warnings func(obj, old runtime.Object) []string
}

// SignerCheck is an authorization a write needs on a signer name: the
// user must hold Verb on the signer (resource certificates.k8s.io
// "signers", by name or by its domain wildcard), else the write is
// invalid with a Forbidden error on Field.
type SignerCheck struct {
	Verb, Signer string
	Field        *field.Path
}

// Refused is the error of a user without the check's verb.
func (c *SignerCheck) Refused(user string) field.ErrorList {
	return field.ErrorList{field.Forbidden(c.Field, fmt.Sprintf("User %q is not permitted to %q for signer %q", user, c.Verb, c.Signer))}
}

// SignerCheckFor is the signer authorization a valid update of old into
// obj through subresource still needs, nil for none.
func (r *Resource) SignerCheckFor(subresource string, obj, old runtime.Object) *SignerCheck {
	sub, ok := r.Strategy.Subresources[subresource]
	if !ok || sub.SignerCheck == nil {
		return nil
	}
	return sub.SignerCheck(obj, old)
}

// FeatureGates answers whether a feature gate is on (pkg/features.Gates).
type FeatureGates interface {
	Enabled(name string) bool
}

// Strategy is the per-kind behaviour applied by the REST verbs. Every field is
// optional; a nil func does nothing.
type Strategy struct {
	// Default fills unset fields, as decoding does upstream (before admission).
	Default func(obj runtime.Object)
	// PrepareForCreate clears or sets server-owned fields before validation.
	PrepareForCreate func(obj runtime.Object)
	// PrepareForCreateBy sets what a create records of the requesting user.
	PrepareForCreateBy func(obj runtime.Object, user authenticationv1.UserInfo)
	// PrepareForUpdate carries server-owned fields over from the old object.
	PrepareForUpdate func(obj, old runtime.Object)
	// ResetStatusMetadata puts back, in a write through /status, the
	// metadata of old the kind's status strategy does not let change (nil:
	// every metadata change is kept; custom resources keep none).
	ResetStatusMetadata func(obj, old metav1.Object)
	// PrepareForSubresourceUpdate prepares a write through a subresource,
	// after the status rule.
	PrepareForSubresourceUpdate func(subresource string, obj, old runtime.Object)
	// Subresources are the strategies of subresources whose updates follow
	// rules of their own (pods/resize), by subresource name.
	Subresources map[string]SubresourceStrategy
	// GenerateName, when set, makes the name of a create that gives only
	// generateName (IPAddress takes it as it is); nil adds upstream's five
	// random characters.
	GenerateName func(base string) string
	// NameFor, when set, is the name rule of obj, for a kind whose rule
	// depends on the object (a ClusterTrustBundle's name starts with its
	// signer name); it stands for the resource's NameValidator.
	NameFor func(obj runtime.Object) NameValidator
	// Validate checks a new object (metadata is checked generically).
	Validate func(obj runtime.Object) field.ErrorList
	// GenericMetadata: the kind's own rules check no metadata (upstream's
	// Event strategy, whose rules depend on the request's version), so
	// metadata gets only k8s.io/apiserver's common checks, as
	// rest.ValidateCreate and rest.ValidateUpdate run them: on create after
	// the kind's rules and only when they pass, on update first.
	GenericMetadata bool
	// ValidateUpdate checks an update (metadata is checked generically).
	ValidateUpdate func(obj, old runtime.Object) field.ErrorList
	// Checks, when set, are what a write of the main resource (old nil on
	// create) needs of the cluster beyond the object (Check).
	Checks func(obj, old runtime.Object) []Check
	// RequireResourceVersion: an update must name the resourceVersion it
	// replaces (upstream's AllowUnconditionalUpdate false).
	RequireResourceVersion bool
	// Warnings are the client warnings of a write of the main resource
	// that passed validation (old is nil on create), as upstream's
	// WarningsOnCreate and WarningsOnUpdate.
	Warnings func(obj, old runtime.Object) []string
	// LintWarnings are the warnings of a write of an admission
	// configuration object: pkg/lint's findings that need no other object,
	// CEL costs estimated with the catalogue's policy schemas (nil when
	// none are set).
	LintWarnings func(obj runtime.Object, schemas lint.Schemas) []string
	// PrepareWarnings are the client warnings of a create that upstream's
	// PrepareForCreate gives while it prepares (a Pod's deprecated AppArmor
	// annotations), from the object before it is prepared.
	PrepareWarnings func(obj runtime.Object) []string
	// Coerce, for custom resources, prunes a decoded body of the fields its
	// schema does not declare and returns their paths, which decoding
	// reports under fieldValidation.
	Coerce func(content map[string]any) (unknownFields []string, err error)
}

// Resource is one served group/version/resource.
type Resource struct {
	schema.GroupVersionResource
	Kind       string
	ListKind   string
	Singular   string
	ShortNames []string
	Categories []string
	Namespaced bool
	// Verbs served on the main resource.
	Verbs        []string
	Subresources []Subresource
	// StatusSubresource: the main resource ignores status changes and the
	// status subresource ignores everything else.
	StatusSubresource bool
	// ClearStatusOnCreate: a create starts from an empty status, before the
	// kind's own PrepareForCreate (which may set an initial one).
	ClearStatusOnCreate bool
	// TracksGeneration: metadata.generation starts at 1 and grows on every
	// change outside metadata and status.
	TracksGeneration bool
	// AllowCreateOnUpdate: PUT of a missing object creates it.
	AllowCreateOnUpdate bool
	// StorageVersion is the version objects are stored in: a version of
	// the resource's own group, or of StoredAs's group when that is set.
	StorageVersion string
	// StoredAs, when not nil, is the group and version of the resource of
	// the same name that stores this one's objects (events.k8s.io's events
	// are core v1 Events, converted on every read and write, as upstream
	// serves one events resource in two groups); nil for every other
	// resource.
	StoredAs *schema.GroupVersion
	// Unstructured resources (custom resources) decode to
	// *unstructured.Unstructured; built-in ones to their k8s.io/api type.
	Unstructured bool
	Strategy     Strategy
	// policy is the catalogue's cluster policy (nil: upstream's defaults).
	policy *ClusterPolicy
	// ScaleSpecReplicasPath, ScaleStatusReplicasPath and
	// ScaleLabelSelectorPath locate the scale subresource's fields in a
	// custom resource (from the CRD, split on ".").
	ScaleSpecReplicasPath, ScaleStatusReplicasPath, ScaleLabelSelectorPath []string
	// NameValidator checks metadata.name (the descriptor's rule for a
	// built-in kind); nil means NameRule of the kind.
	NameValidator NameValidator
	// PrinterColumns are a custom resource version's additionalPrinterColumns
	// (the columns of kubectl get); empty for built-in resources.
	PrinterColumns []apiextensionsv1.CustomResourceColumnDefinition
	// OpenAPIV3Schema is a custom resource version's schema (what its
	// OpenAPI documents publish); nil for built-in resources.
	OpenAPIV3Schema *apiextensionsv1.JSONSchemaProps
	// FieldLabels are the fields a field selector may use beyond
	// metadata.name and metadata.namespace (upstream's field label
	// conversion functions); custom resources accept any.
	FieldLabels []string
	// StrictFieldLabels: the field labels are metadata.name and
	// FieldLabels only, not metadata.namespace (the kinds whose upstream
	// label conversion leaves it out, namespaced ones too).
	StrictFieldLabels bool
	// FieldLabelRefusal, when set, is the message refusing a field label
	// (upstream's conversion words some of its own: Job's, ResourceSlice's);
	// nil: "field label not supported: <label>", or apimachinery's default
	// for a kind without labels of its own.
	FieldLabelRefusal func(label string) string
	// Converter converts a custom resource between its definition's
	// versions (nil: relabelling); nil for built-in resources.
	Converter Converter
	// DefaultGCPolicy is what a delete that names no propagation policy
	// does to the object's dependents.
	DefaultGCPolicy GCPolicy
	// Deprecation is the warning every request of a deprecated version
	// gets ("... is deprecated in v1.37+, ..."); empty for the others.
	Deprecation string
}

// GroupVersionKind returns the kind of the resource's objects.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GroupVersion().WithKind(r.Kind)
}

// StorageGroupVersion is the group and version the resource's objects are
// stored in.
func (r *Resource) StorageGroupVersion() schema.GroupVersion {
	if r.StoredAs != nil {
		return *r.StoredAs
	}
	return schema.GroupVersion{Group: r.Group, Version: r.StorageVersion}
}

// Subresource returns the named subresource.
func (r *Resource) Subresource(name string) (Subresource, bool) {
	for _, s := range r.Subresources {
		if s.Name == name {
			return s, true
		}
	}
	return Subresource{}, false
}

// HasVerb reports whether verb is served on the main resource.
func (r *Resource) HasVerb(verb string) bool {
	for _, v := range r.Verbs {
		if v == verb {
			return true
		}
	}
	return false
}

// ReturnsDeletedObject reports whether a DELETE of r answers with the
// deleted object rather than a Status, as the kinds whose upstream storage
// sets ReturnDeletedObject.
func (r *Resource) ReturnsDeletedObject() bool {
	switch r.Group {
	case "":
		switch r.Resource {
		case "namespaces", "pods", "services", "serviceaccounts", "persistentvolumes", "persistentvolumeclaims", "resourcequotas", "podtemplates":
			return true
		}
	case "storage.k8s.io":
		switch r.Resource {
		case "storageclasses", "csidrivers", "csinodes", "volumeattachments", "volumeattributesclasses":
			return true
		}
	case "resource.k8s.io":
		// DeviceTaintRule's v1 storage answers with a Status.
		return r.Resource != "devicetaintrules"
	}
	return false
}
