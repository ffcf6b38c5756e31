package registry

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/pkg/features"
	"github.com/admitd/admitd/pkg/lint"
)

// Catalogue is the set of served resources. Lookups read an immutable
// snapshot without locks; custom resources are added and removed by
// publishing a new snapshot.
type Catalogue struct {
	mu      sync.Mutex // serialises writers
	current atomic.Pointer[snapshot]
	builtin []*Resource
	policy  ClusterPolicy
	// converters builds custom resources' converters (crd_conversion.go).
	converters ConverterFactory
}

// ClusterPolicy is what kube-apiserver's flags decide about API
// validation, read by the catalogue's resources.
type ClusterPolicy struct {
	// allowPrivileged is --allow-privileged: whether containers may be
	// privileged (upstream's default: no).
	allowPrivileged atomic.Bool
	// gates are --feature-gates (nil: every gate at its 1.37 default).
	gates atomic.Pointer[FeatureGates]
	// schemas are the policy schemas (SetPolicySchemas).
	schemas atomic.Pointer[lint.Schemas]
}

// SetPolicySchemas sets the kinds and schemas the writes of admission
// policies are linted with (the OpenAPI service's built-in schemas and the
// catalogue's CRDs); without it CEL costs are estimated untyped.
func (c *Catalogue) SetPolicySchemas(s lint.Schemas) { c.policy.schemas.Store(&s) }

// PolicySchemas returns the schemas SetPolicySchemas sets, looked up at
// each call (it may be taken before they are set; until then no kind has
// a schema).
func (c *Catalogue) PolicySchemas() lint.Schemas { return policySchemas{&c.policy} }

// policySchemas are the policy schemas of r's catalogue, or nil.
func (r *Resource) policySchemas() lint.Schemas {
	if r.policy == nil {
		return nil
	}
	return policySchemas{r.policy}
}

// policySchemas asks the schemas a cluster policy holds at each call.
type policySchemas struct{ p *ClusterPolicy }

func (s policySchemas) KindsFor(gvr schema.GroupVersionResource) []schema.GroupVersionKind {
	if set := s.p.schemas.Load(); set != nil {
		return (*set).KindsFor(gvr)
	}
	return nil
}

func (s policySchemas) ResolveSchema(gvk schema.GroupVersionKind) *spec.Schema {
	if set := s.p.schemas.Load(); set != nil {
		return (*set).ResolveSchema(gvk)
	}
	return nil
}

// SetFeatureGates sets the feature gates the resources' strategies read
// (--feature-gates); without it every gate is at its 1.37 default.
func (c *Catalogue) SetFeatureGates(g FeatureGates) { c.policy.gates.Store(&g) }

// defaultGates are the gates at their kube-apiserver 1.37 defaults.
type defaultGates struct{}

func (defaultGates) Enabled(name string) bool { return features.Default(name) }

// FeatureEnabled tells whether the feature gate name is on for the
// catalogue r belongs to (--feature-gates, else its 1.37 default).
func (r *Resource) FeatureEnabled(name string) bool { return r.gates().Enabled(name) }

// gates are the feature gates of the catalogue r belongs to.
func (r *Resource) gates() FeatureGates {
	if r.policy != nil {
		if g := r.policy.gates.Load(); g != nil && *g != nil {
			return *g
		}
	}
	return defaultGates{}
}

// SetAllowPrivileged sets --allow-privileged for every resource of the
// catalogue. Without it privileged containers, in pods and in pod
// templates, are refused ("disallowed by cluster policy"), as upstream.
func (c *Catalogue) SetAllowPrivileged(allow bool) { c.policy.allowPrivileged.Store(allow) }

type snapshot struct {
	resources []*Resource // discovery order
	byGVR     map[schema.GroupVersionResource]*Resource
	byGVK     map[schema.GroupVersionKind]*Resource
	// versions lists the served versions of each group, preferred first.
	versions map[string][]string
	groups   []string // discovery order
	custom   map[string][]*Resource
	// cohabitants are, for a group/resource, the other groups' resources
	// stored with it (Resource.StoredAs).
	cohabitants map[schema.GroupResource][]schema.GroupResource
}

// NewCatalogue returns a catalogue of the built-in resources kube-apiserver
// 1.37 serves by default.
func NewCatalogue() *Catalogue { return NewCatalogueOf(DefaultAPIEnablement()) }

// NewCatalogueOf returns a catalogue of the built-in resources e serves
// (--runtime-config).
func NewCatalogueOf(e *APIEnablement) *Catalogue {
	c := &Catalogue{}
	for _, d := range builtinDescriptors() {
		c.builtin = append(c.builtin, d.build(e)...)
	}
	for _, r := range c.builtin {
		r.policy = &c.policy
	}
	c.publish(map[string][]*Resource{})
	return c
}

func (c *Catalogue) publish(custom map[string][]*Resource) {
	s := &snapshot{
		byGVR:       map[schema.GroupVersionResource]*Resource{},
		byGVK:       map[schema.GroupVersionKind]*Resource{},
		versions:    map[string][]string{},
		custom:      custom,
		cohabitants: map[schema.GroupResource][]schema.GroupResource{},
	}
	add := func(r *Resource) {
		s.resources = append(s.resources, r)
		s.byGVR[r.GroupVersionResource] = r
		if _, ok := s.byGVK[r.GroupVersionKind()]; !ok {
			s.byGVK[r.GroupVersionKind()] = r
		}
		vs := s.versions[r.Group]
		if !contains(vs, r.Version) {
			s.versions[r.Group] = append(vs, r.Version)
		}
		s.addCohabitant(r)
	}
	for _, r := range c.builtin {
		add(r)
	}
	names := make([]string, 0, len(custom))
	for n := range custom {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, r := range custom[n] {
			add(r)
		}
	}
	sortCustomVersions(s.versions, c.builtin)
	seen := map[string]bool{}
	for _, g := range groupOrder {
		if _, ok := s.versions[g]; ok {
			s.groups = append(s.groups, g)
			seen[g] = true
		}
	}
	var rest []string
	for g := range s.versions {
		if !seen[g] {
			rest = append(rest, g)
		}
	}
	sort.Strings(rest)
	s.groups = append(s.groups, rest...)
	c.current.Store(s)
}

// sortCustomVersions orders the versions of the custom resources' groups
// by Kubernetes version priority (v2 before v1, GA before beta before
// alpha, other names last), as apiextensions-apiserver lists them; the
// first is the group's preferred version.
func sortCustomVersions(versions map[string][]string, builtin []*Resource) {
	isBuiltin := map[string]bool{}
	for _, r := range builtin {
		isBuiltin[r.Group] = true
	}
	for g, vs := range versions {
		if !isBuiltin[g] {
			sort.SliceStable(vs, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(vs[i], vs[j]) > 0 })
		}
	}
}

// SetCustom replaces the resources served for one custom resource
// definition (key: the CRD name); nil removes them.
func (c *Catalogue) SetCustom(name string, resources []*Resource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.current.Load().custom
	next := make(map[string][]*Resource, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	if resources == nil {
		delete(next, name)
	} else {
		next[name] = resources
	}
	c.publish(next)
}

// Lookup returns the resource served at gvr.
func (c *Catalogue) Lookup(gvr schema.GroupVersionResource) (*Resource, bool) {
	r, ok := c.current.Load().byGVR[gvr]
	return r, ok
}

// LookupKind returns the resource whose objects have kind gvk.
func (c *Catalogue) LookupKind(gvk schema.GroupVersionKind) (*Resource, bool) {
	r, ok := c.current.Load().byGVK[gvk]
	return r, ok
}

// Resources returns every served resource in discovery order.
func (c *Catalogue) Resources() []*Resource {
	return c.current.Load().resources
}

// Groups returns the served groups in discovery order ("" is core).
func (c *Catalogue) Groups() []string {
	return c.current.Load().groups
}

// Versions returns the served versions of group, preferred first.
func (c *Catalogue) Versions(group string) []string {
	return c.current.Load().versions[group]
}

// Equivalents returns every served version of the same group and resource
// as gvr (gvr itself included), preferred version first, then those of the
// other groups' resources stored with it (core and events.k8s.io events),
// as upstream's equivalent resources are those of one storage prefix.
func (c *Catalogue) Equivalents(gvr schema.GroupVersionResource) []schema.GroupVersionResource {
	s := c.current.Load()
	out := s.groupEquivalents(gvr.Group, gvr.Resource)
	for _, gr := range s.cohabitants[gvr.GroupResource()] {
		out = append(out, s.groupEquivalents(gr.Group, gr.Resource)...)
	}
	return out
}

// addCohabitant records r as stored with its StoredAs resource, both ways.
func (s *snapshot) addCohabitant(r *Resource) {
	if r.StoredAs == nil {
		return
	}
	mine, stored := r.GroupResource(), schema.GroupResource{Group: r.StoredAs.Group, Resource: r.Resource}
	if !slices.Contains(s.cohabitants[stored], mine) {
		s.cohabitants[stored] = append(s.cohabitants[stored], mine)
		s.cohabitants[mine] = append(s.cohabitants[mine], stored)
	}
}

// groupEquivalents returns the served versions of group's resource,
// preferred first.
func (s *snapshot) groupEquivalents(group, resource string) []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	for _, v := range s.versions[group] {
		g := schema.GroupVersionResource{Group: group, Version: v, Resource: resource}
		if _, ok := s.byGVR[g]; ok {
			out = append(out, g)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func lower(s string) string { return strings.ToLower(s) }

func sortSubresources(subs []Subresource) {
	sort.Slice(subs, func(i, j int) bool { return subs[i].Name < subs[j].Name })
}

// ReplaceCustom replaces every custom resource at once (key: CRD name).
func (c *Catalogue) ReplaceCustom(custom map[string][]*Resource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.publish(custom)
}
