package policies

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
	"github.com/admitd/admitd/pkg/admission/match"
)

// Options are the dependencies of both policy plugins.
type Options struct {
	// Source gives the current policies and bindings; nil: none.
	Source Source
	// Params reads param objects; without it every paramKind is unknown.
	Params ParamSource
	// TypeConverters gives the schemas ApplyConfiguration mutations merge
	// with for kinds the built-in schemas do not know (custom resources);
	// nil knows none.
	TypeConverters TypeConverterSource
	// CEL compiles expressions; by default both plugins share a new
	// compiler.
	CEL *admcel.Compiler
	// Metrics receives the policy metrics; nil records none.
	Metrics *Metrics
	// AdmissionMetrics receives the metrics policies share with webhooks
	// (matchConditions, static manifest reloads); nil records none.
	AdmissionMetrics *admission.Metrics
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// DefaultConfiguration and ValidateConfiguration apply the API's
	// defaults and create-time validation to static manifests.
	DefaultConfiguration  func(obj runtime.Object)
	ValidateConfiguration func(obj runtime.Object) error
}

// Register adds ValidatingAdmissionPolicy and MutatingAdmissionPolicy to r.
func Register(r *admission.Registry, o Options) {
	if o.CEL == nil {
		o.CEL = admcel.NewCompiler(admcel.Options{})
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	r.Register(MutatingName, func(pc admission.PluginContext) (admission.Handler, error) {
		return NewMutating(o, pc)
	})
	r.Register(ValidatingName, func(pc admission.PluginContext) (admission.Handler, error) {
		return NewValidating(o, pc)
	})
}

// plugin is what both plugins share: the compiled hooks of the current
// snapshot and the request-independent dependencies.
type plugin struct {
	name       string
	o          Options
	schema     admission.Schema
	namespaces admission.NamespaceLookup
	authorizer admission.Authorizer
	build      func(snap *Snapshot, prev *hookSet) *hookSet
	// static holds the plugin's static manifests (nil without a
	// staticManifestsDir).
	static *staticManifests

	mu      sync.Mutex // serialises rebuilds
	current atomic.Pointer[builtSet]
}

// builtSet is the compiled hooks of one pair of API snapshot and static
// manifest set.
type builtSet struct {
	snap        *Snapshot
	manifests   *manifestSet
	api, static *hookSet
}

// configKinds are the kinds of each plugin's configuration.
var configKinds = map[string]string{
	ValidatingName: "ValidatingAdmissionPolicyConfiguration",
	MutatingName:   "MutatingAdmissionPolicyConfiguration",
}

func newPlugin(name string, o Options, pc admission.PluginContext, build func(*Snapshot, *hookSet) *hookSet) (*plugin, error) {
	if o.CEL == nil {
		o.CEL = admcel.NewCompiler(admcel.Options{})
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Source == nil {
		o.Source = StaticSource{}
	}
	p := &plugin{name: name, o: o, schema: pc.Schema, namespaces: pc.Namespaces, authorizer: pc.Authorizer, build: build}
	cfg, err := loadPluginConfig(pc.Config, configKinds[name])
	if err != nil {
		return nil, err
	}
	if cfg.StaticManifestsDir != "" {
		loader := manifestLoader{mutating: name == MutatingName, defaultObj: o.DefaultConfiguration, validate: o.ValidateConfiguration}
		if p.static, err = newStaticManifests(cfg.StaticManifestsDir, loader, o.Logger, p.reloadObserver()); err != nil {
			return nil, err
		}
		if pc.Context != nil {
			p.static.Watch(pc.Context, cfg.StaticManifestsDir)
		}
	}
	return p, nil
}

// reloadObserver reports the loads of the static manifests in the reload
// metrics under the plugin's name.
func (p *plugin) reloadObserver() func(error) {
	return func(err error) { p.o.AdmissionMetrics.ObserveManifestReload(p.name, err) }
}

// noManifests stands for a plugin without static manifests.
var noManifests = &manifestSet{snap: &Snapshot{}}

// hooks returns the static hooks (evaluated first) and the API hooks of
// the current configuration, building them when it changed.
func (p *plugin) hooks() (static, api *hookSet) {
	snap, manifests := p.o.Source.Current(), noManifests
	if p.static != nil {
		manifests = p.static.Get().Value
	}
	if b := p.current.Load(); b != nil && b.snap == snap && b.manifests == manifests {
		return b.static, b.api
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.current.Load()
	if b != nil && b.snap == snap && b.manifests == manifests {
		return b.static, b.api
	}
	next := &builtSet{snap: snap, manifests: manifests}
	var prevAPI, prevStatic *hookSet
	if b != nil {
		prevAPI, prevStatic = b.api, b.static
	}
	next.api, next.static = b.reuseAPI(snap, prevAPI, p.build), b.reuseStatic(manifests, prevStatic, p.build)
	p.current.Store(next)
	return next.static, next.api
}

func (b *builtSet) reuseAPI(snap *Snapshot, prev *hookSet, build func(*Snapshot, *hookSet) *hookSet) *hookSet {
	if b != nil && b.snap == snap {
		return b.api
	}
	return build(snap, prev)
}

func (b *builtSet) reuseStatic(m *manifestSet, prev *hookSet, build func(*Snapshot, *hookSet) *hookSet) *hookSet {
	if b != nil && b.manifests == m {
		return b.static
	}
	return build(m.snap, prev)
}

// hookSets returns the hook sets a request is matched against: none for
// the review resources, only the static ones for the policy resources
// themselves, else static then API hooks.
func (p *plugin) hookSets(a *admission.Attributes) []*hookSet {
	static, api := p.hooks()
	switch match.PolicyExemption(a) {
	case match.ExemptFromAllHooks:
		return nil
	case match.ExemptFromAPIHooks:
		return []*hookSet{static}
	}
	return []*hookSet{static, api}
}

func (p *plugin) matchEnv() match.Env {
	env := match.Env{Namespaces: p.namespaces}
	if p.schema != nil {
		env.Equivalents = p.schema
	}
	return env
}

// paramKindKnown reports whether a hook's paramKind is served.
func (p *plugin) paramKindKnown(h *hook) bool {
	if h.paramKind == nil {
		return true
	}
	if p.o.Params == nil {
		return false
	}
	_, _, ok := p.o.Params.ResolveParamKind(h.paramGVK)
	return ok
}

// namespace returns the namespace policies see for a request: none for
// cluster-scoped requests and for requests on a Namespace itself. A lookup
// error is returned as the client will see it.
func (p *plugin) namespace(ctx context.Context, a *admission.Attributes) (*corev1.Namespace, error) {
	name := a.Namespace
	if a.Kind.Group == "" && a.Kind.Version == "v1" && a.Kind.Kind == "Namespace" {
		name = ""
	}
	if name == "" || p.namespaces == nil {
		return nil, nil
	}
	if a.Record != nil {
		return a.Record.Namespace(ctx, name, p.namespaces)
	}
	return p.namespaces.GetNamespace(ctx, name)
}

// convert returns obj as kind; nil stays nil.
func (p *plugin) convert(obj runtime.Object, kind schema.GroupVersionKind) (runtime.Object, error) {
	if obj == nil || obj.GetObjectKind().GroupVersionKind() == kind || p.schema == nil {
		return obj, nil
	}
	return p.schema.ConvertTo(obj, kind)
}
