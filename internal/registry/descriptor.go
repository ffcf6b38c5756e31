package registry

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// descriptor is everything admitd knows about one built-in kind: the facts
// discovery publishes, the strategy, the name rule, the status rule, the
// served and storage versions, the garbage-collection policy and the field
// labels. Each group's file (core.go, apps.go, ...) lists its descriptors.
type descriptor struct {
	// gv is the group and the storage version ("apps/v1"; "v1" is the core
	// group), served first.
	gv string
	// alsoServed are further versions of the group serving the kind, in
	// discovery order after gv's; they convert through Scheme.
	alsoServed []string
	// storedAs is the group/version of another group's resource of the
	// same name that stores the kind's objects ("v1": core), when set.
	storedAs   string
	resource   string
	kind       string
	namespaced bool
	short      []string
	categories []string
	// verbs served on the main resource; nil means StandardVerbs.
	verbs  []string
	status statusRule
	// generation: metadata.generation tracks changes outside metadata and
	// status.
	generation bool
	// subresources other than status (which status adds).
	subresources []Subresource
	strategy     Strategy
	// createOnUpdate: a PUT of a missing object creates it.
	createOnUpdate bool
	// name is upstream's rule for metadata.name; nil is the path-segment
	// rule every name must meet.
	name NameValidator
	gc   GCPolicy
	// fields are the field labels besides metadata.name and
	// metadata.namespace.
	fields []string
	// strictFields: metadata.namespace is not a field label either
	// (Resource.StrictFieldLabels).
	strictFields bool
	// fieldRefusal words the refusal of a field label
	// (Resource.FieldLabelRefusal).
	fieldRefusal func(label string) string
}

// statusRule says whether a kind has a status subresource and what a create
// does to the status a client sends.
type statusRule int

const (
	// noStatus: no status subresource; status is an ordinary field.
	noStatus statusRule = iota
	// statusSubresource: a write of the main resource keeps the stored
	// status and a status write keeps everything else; a create keeps the
	// status sent unless the kind's own preparation sets one.
	statusSubresource
	// statusReset: as statusSubresource, and a create starts from an empty
	// status (before the kind's own preparation).
	statusReset
)

// StandardVerbs are the verbs of an ordinary resource.
var StandardVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

var subVerbs = []string{"get", "patch", "update"}

var all = []string{"all"}

func scaleSub() Subresource {
	return Subresource{Name: "scale", Kind: schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Verbs: subVerbs}
}

// builtinDescriptors lists the built-in kinds in discovery order.
func builtinDescriptors() []descriptor {
	return slices.Concat(coreKinds(), apiregistrationKinds(), admissionregistrationKinds(), apiextensionsKinds(), appsKinds(),
		autoscalingKinds(), batchKinds(), certificatesKinds(), otherKinds(), storageKinds(), draKinds(), flowcontrolKinds(),
		storagemigrationKinds())
}

// groupOrder is the order of groups in discovery (core first).
var groupOrder = []string{
	"", "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io",
	"autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io", "policy", "rbac.authorization.k8s.io",
	"storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
	"coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "resource.k8s.io", "flowcontrol.apiserver.k8s.io",
	"storagemigration.k8s.io",
}

// build returns the catalogue entries the rest of admitd consumes, one per
// version e serves.
func (d descriptor) build(e *APIEnablement) []*Resource {
	var out []*Resource
	group := d.groupVersion().Group
	for _, v := range append([]string{d.groupVersion().Version}, d.alsoServed...) {
		if gv := (schema.GroupVersion{Group: group, Version: v}); e.ResourceEnabled(gv.WithResource(d.resource)) {
			out = append(out, d.buildVersion(gv))
		}
	}
	for _, v := range optionalVersions[d.groupVersion().WithKind(d.kind)] {
		if gv := (schema.GroupVersion{Group: group, Version: v}); e.ResourceEnabled(gv.WithResource(d.resource)) {
			out = append(out, d.buildOptional(gv))
		}
	}
	return out
}

func (d descriptor) buildVersion(gv schema.GroupVersion) *Resource {
	out := &Resource{
		GroupVersionResource: gv.WithResource(d.resource),
		Kind:                 d.kind,
		ListKind:             d.kind + "List",
		Singular:             lower(d.kind),
		ShortNames:           d.short,
		Categories:           d.categories,
		Namespaced:           d.namespaced,
		Verbs:                d.verbs,
		StatusSubresource:    d.status != noStatus,
		ClearStatusOnCreate:  d.status == statusReset,
		TracksGeneration:     d.generation,
		AllowCreateOnUpdate:  d.createOnUpdate,
		StorageVersion:       d.groupVersion().Version,
		Strategy:             d.strategy,
		NameValidator:        d.name,
		DefaultGCPolicy:      d.gc,
		FieldLabels:          d.fields,
		StrictFieldLabels:    d.strictFields,
		FieldLabelRefusal:    d.fieldRefusal,
		Deprecation:          deprecationWarning(gv.WithKind(d.kind)),
	}
	if d.storedAs != "" {
		stored := d.storedGroupVersion()
		out.StoredAs, out.StorageVersion = &stored, stored.Version
	}
	if out.Verbs == nil {
		out.Verbs = StandardVerbs
	}
	if out.NameValidator == nil {
		out.NameValidator = pathSegmentName
	}
	if out.StatusSubresource {
		out.Subresources = append(out.Subresources, Subresource{Name: "status", Kind: out.GroupVersionKind(), Verbs: subVerbs})
	}
	out.Subresources = append(out.Subresources, d.subresources...)
	sortSubresources(out.Subresources)
	return out
}

func (d descriptor) groupVersion() schema.GroupVersion {
	gv, err := schema.ParseGroupVersion(d.gv)
	if err != nil {
		panic(err)
	}
	return gv
}

// storedGroupVersion is the group and version the kind's objects are
// stored in.
func (d descriptor) storedGroupVersion() schema.GroupVersion {
	if d.storedAs == "" {
		return d.groupVersion()
	}
	gv, err := schema.ParseGroupVersion(d.storedAs)
	if err != nil {
		panic(err)
	}
	return gv
}

// groupKind is the descriptor's kind without its version.
func (d descriptor) groupKind() schema.GroupKind {
	return d.groupVersion().WithKind(d.kind).GroupKind()
}
