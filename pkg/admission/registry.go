package admission

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NamespaceLookup reads namespaces for plugins. Get returns a NotFound
// StatusError (k8s.io/apimachinery/pkg/api/errors) when the namespace does not
// exist.
type NamespaceLookup interface {
	GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error)
}

// LiveNamespaceLookup is a NamespaceLookup over a cache that can also read
// past it: GetNamespaceLive returns the namespace as storage holds it now.
// NamespaceLifecycle uses it for a namespace whose deletion it admitted a
// moment ago while the cache still says Active.
type LiveNamespaceLookup interface {
	NamespaceLookup
	GetNamespaceLive(ctx context.Context, name string) (*corev1.Namespace, error)
}

// ObjectLookup reads objects of the cluster for plugins (such as the pods
// and nodes NodeRestriction checks). GetObject returns the stored object, in
// the version the server stores, or a NotFound StatusError when it does not
// exist or its resource is not served. The object may be shared: a plugin
// must not modify it.
type ObjectLookup interface {
	GetObject(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error)
}

// PluginContext is what a plugin may use when it is built.
type PluginContext struct {
	// Context ends when the server stops: a plugin's background work (such
	// as watching its manifest directory) ends with it. Nil: the plugin
	// runs no background work.
	Context context.Context
	// Namespaces reads namespaces (never nil when built by the server).
	Namespaces NamespaceLookup
	// Objects reads any served object (never nil when built by the
	// server).
	Objects ObjectLookup
	// Config is the plugin's section of the AdmissionConfiguration, or nil.
	Config io.Reader
	// Schema knows the served kinds (never nil when built by the server).
	Schema Schema
	// Authorizer answers the authorization checks of CEL expressions (the
	// authorizer variable). When nil, evaluating authorizer fails with
	// "no such attribute(s): authorizer".
	Authorizer Authorizer
	// Cache reads cluster objects from watch-fed caches (never nil when
	// built by the server).
	Cache ObjectCache
	// Creator creates objects through the API server (never nil when built
	// by the server).
	Creator ObjectCreator
	// Status writes the status of objects through the API server (never
	// nil when built by the server).
	Status StatusUpdater
	// Features are the feature gates; nil means upstream's defaults (read
	// them with Gates).
	Features FeatureGates
}

// Factory builds a plugin.
type Factory func(pc PluginContext) (Handler, error)

// Registry knows the plugins that can run and their order. It starts with
// kube-apiserver's order of its plugins (AllOrderedPlugins); a plugin
// registered under one of those names takes its upstream place, and a plugin
// of the caller's own, under any other name, is placed by the caller with
// Register (after every upstream plugin) or RegisterBefore.
type Registry struct {
	factories map[string]Factory
	order     []string // upstream names, with the caller's own inserted
	upstream  map[string]bool
}

// NewRegistry returns a registry without plugins.
func NewRegistry() *Registry {
	up := make(map[string]bool, len(pluginOrder))
	for _, n := range pluginOrder {
		up[n] = true
	}
	return &Registry{factories: map[string]Factory{}, order: slices.Clone(pluginOrder), upstream: up}
}

// Register adds a plugin. An upstream name runs in its upstream place; any
// other name runs after every plugin registered before it, upstream ones
// included, as plugins appended to kube-apiserver's RecommendedPluginOrder
// do. Registering a name twice is a programming error and panics.
func (r *Registry) Register(name string, f Factory) {
	r.checkNew(name)
	if !r.upstream[name] {
		r.order = append(r.order, name)
	}
	r.factories[name] = f
}

// RegisterBefore adds a plugin of the caller's own that runs just before the
// plugin called before: an upstream name (registered or not) or a name the
// caller registered earlier. Plugins placed before the same name run in the
// order they were registered. It panics when name is an upstream name or
// already registered, or when before is unknown.
func (r *Registry) RegisterBefore(name, before string, f Factory) {
	r.checkNew(name)
	if r.upstream[name] {
		panic(fmt.Sprintf("admission plugin %q is an upstream plugin: it keeps its upstream place; use Register", name))
	}
	i := slices.Index(r.order, before)
	if i < 0 {
		panic(fmt.Sprintf("admission plugin %q: cannot run before unknown plugin %q", name, before))
	}
	r.order = slices.Insert(r.order, i, name)
	r.factories[name] = f
}

func (r *Registry) checkNew(name string) {
	if name == "" {
		panic("admission plugin registered without a name")
	}
	if _, dup := r.factories[name]; dup {
		panic(fmt.Sprintf("admission plugin %q registered twice", name))
	}
}

// Registered reports whether a plugin is implemented.
func (r *Registry) Registered(name string) bool {
	_, ok := r.factories[name]
	return ok
}

// known reports whether name is an upstream name or a registered one.
func (r *Registry) known(name string) bool {
	return r.upstream[name] || r.Registered(name)
}

// Enabled computes the plugins to run, in the registry's order, from the
// --enable-admission-plugins and --disable-admission-plugins flags, as
// kube-apiserver does. Upstream plugins that are off by default upstream are
// off here; the caller's own plugins are on unless disabled. Upstream plugins
// that are not registered are skipped when on by default and refused when
// named in enable; a name that is neither upstream nor registered is refused.
func (r *Registry) Enabled(enable, disable []string) ([]string, error) {
	for _, n := range enable {
		if !r.known(n) {
			return nil, fmt.Errorf("enable-admission-plugins plugin %q is unknown", n)
		}
		if !r.Registered(n) {
			return nil, fmt.Errorf("enable-admission-plugins plugin %q is not implemented by admitd yet", n)
		}
	}
	for _, n := range disable {
		if !r.known(n) {
			return nil, fmt.Errorf("disable-admission-plugins plugin %q is unknown", n)
		}
	}
	if both := intersect(enable, disable); len(both) > 0 {
		return nil, fmt.Errorf("%v in enable-admission-plugins and disable-admission-plugins overlapped", both)
	}
	off := map[string]bool{}
	for _, n := range defaultOffPlugins {
		off[n] = true
	}
	for _, n := range disable {
		off[n] = true
	}
	for _, n := range enable {
		delete(off, n)
	}
	var out []string
	for _, n := range r.order {
		if !off[n] && r.Registered(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// EnabledExactly computes the plugins to run from the deprecated
// --admission-control flag, as kube-apiserver does: exactly the named
// plugins, in the registry's order whatever the order of names.
func (r *Registry) EnabledExactly(names []string) ([]string, error) {
	on := map[string]bool{}
	for _, n := range names {
		if !r.known(n) {
			return nil, fmt.Errorf("admission-control plugin %q is unknown", n)
		}
		if !r.Registered(n) {
			return nil, fmt.Errorf("admission-control plugin %q is not implemented by admitd yet", n)
		}
		on[n] = true
	}
	var out []string
	for _, n := range r.order {
		if on[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// NewChain builds the chain of the named plugins, in the order of names (as
// Enabled returns them, or any order the caller chooses). configFor returns
// each plugin's configuration, or nil; a nil configFor gives none.
func (r *Registry) NewChain(names []string, pc PluginContext, configFor func(name string) io.Reader) (*Chain, error) {
	var plugins []NamedPlugin
	for _, n := range names {
		f, ok := r.factories[n]
		if !ok {
			return nil, fmt.Errorf("admission plugin %q is not implemented by admitd", n)
		}
		c := pc
		if configFor != nil {
			c.Config = configFor(n)
		}
		p, err := f(c)
		if err != nil {
			return nil, fmt.Errorf("couldn't init admission plugin %q: %w", n, err)
		}
		plugins = append(plugins, NamedPlugin{Name: n, Plugin: p})
	}
	return NewChain(plugins...), nil
}

func intersect(a, b []string) []string {
	set := map[string]bool{}
	for _, x := range a {
		set[x] = true
	}
	var out []string
	for _, x := range b {
		if set[x] {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}
