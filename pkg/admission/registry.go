package admission

import (
	"context"
	"fmt"
	"io"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// NamespaceLookup reads namespaces for plugins. Get returns a NotFound
// StatusError (k8s.io/apimachinery/pkg/api/errors) when the namespace does not
// exist.
type NamespaceLookup interface {
	GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error)
}

// PluginContext is what a plugin may use when it is built.
type PluginContext struct {
	// Context ends when the server stops: a plugin's background work (such
	// as watching its manifest directory) ends with it. Nil: the plugin
	// runs no background work.
	Context context.Context
	// Namespaces reads namespaces (never nil when built by the server).
	Namespaces NamespaceLookup
	// Config is the plugin's section of the AdmissionConfiguration, or nil.
	Config io.Reader
	// Schema knows the served kinds (never nil when built by the server).
	Schema Schema
	// Authorizer answers the authorization checks of CEL expressions (the
	// authorizer variable). When nil, evaluating authorizer fails with
	// "no such attribute(s): authorizer".
	Authorizer Authorizer
}

// Factory builds a plugin.
type Factory func(pc PluginContext) (Handler, error)

// Registry knows the plugins admitd can run, by upstream name.
type Registry struct {
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{factories: map[string]Factory{}}
}

// Register adds a plugin. Registering a name twice is a programming error
// and panics.
func (r *Registry) Register(name string, f Factory) {
	if _, dup := r.factories[name]; dup {
		panic(fmt.Sprintf("admission plugin %q registered twice", name))
	}
	if !knownPlugin(name) {
		panic(fmt.Sprintf("admission plugin %q is not in the upstream plugin order", name))
	}
	r.factories[name] = f
}

// Registered reports whether a plugin is implemented.
func (r *Registry) Registered(name string) bool {
	_, ok := r.factories[name]
	return ok
}

// Enabled computes the plugins to run, in upstream order, from the
// --enable-admission-plugins and --disable-admission-plugins flags, as
// kube-apiserver does. Plugins admitd does not implement are skipped when
// they are on by default and refused when named explicitly.
func (r *Registry) Enabled(enable, disable []string) ([]string, error) {
	for _, n := range enable {
		if !knownPlugin(n) {
			return nil, fmt.Errorf("enable-admission-plugins plugin %q is unknown", n)
		}
		if !r.Registered(n) {
			return nil, fmt.Errorf("enable-admission-plugins plugin %q is not implemented by admitd yet", n)
		}
	}
	for _, n := range disable {
		if !knownPlugin(n) {
			return nil, fmt.Errorf("disable-admission-plugins plugin %q is unknown", n)
		}
	}
	if both := intersect(enable, disable); len(both) > 0 {
		return nil, fmt.Errorf("%v in enable-admission-plugins and disable-admission-plugins overlapped", both)
	}
	off := map[string]bool{}
	for _, n := range DefaultOffPlugins {
		off[n] = true
	}
	for _, n := range disable {
		off[n] = true
	}
	for _, n := range enable {
		delete(off, n)
	}
	var out []string
	for _, n := range PluginOrder {
		if !off[n] && r.Registered(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// NewChain builds the chain of the named plugins (in the given order).
// configFor returns each plugin's configuration, or nil.
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
			return nil, fmt.Errorf("admission plugin %q: %w", n, err)
		}
		plugins = append(plugins, NamedPlugin{Name: n, Plugin: p})
	}
	return NewChain(plugins...), nil
}

func knownPlugin(name string) bool {
	for _, n := range PluginOrder {
		if n == name {
			return true
		}
	}
	return false
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
