package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/defaulttolerationseconds"
	"github.com/admitd/admitd/pkg/admission/plugins/podsecurity"
	"github.com/admitd/admitd/pkg/admission/plugins/standard"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/admission/webhooks"
	"github.com/admitd/admitd/pkg/features"
	"github.com/admitd/admitd/pkg/storage"
)

// admissionParts are the admission chain, the caches that feed it and its
// metrics.
type admissionParts struct {
	chain    *admission.Chain
	webhooks *admissionsource.WebhookConfigs
	policies *admissionsource.PolicyConfigs
	// sources are the watch-fed caches of what admission reads (namespaces,
	// services, secrets, params, ...), started once storage is bootstrapped.
	sources *admissionsource.Sources
	metrics *admission.Metrics
	// types are the structured-merge types of custom resources, shared by
	// MutatingAdmissionPolicy and the API server's managedFields.
	types *admissionsource.CRDTypeConverters
	// gates are upstream's feature gates with --feature-gates applied,
	// built once (~0.3 ms each) for every part of the server that asks.
	gates *features.Gates
}

// newMetricsRegistry returns the registry served on /metrics, with the
// process collector and the Go collector exporting every runtime/metrics
// series besides the classic go_* ones, as component-base's legacy
// registry has them, kubernetes_build_info and the workqueue families.
func newMetricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsAll)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	apiserver.RegisterBuildInfo(reg)
	registerWorkqueueMetrics(reg)
	return reg
}

// newAdmission builds the chain of enabled plugins in upstream order, with
// the webhook plugins reading configurations from storage; CEL's authorizer
// asks authz.
func newAdmission(ctx context.Context, o Options, store storage.Store, cat *registry.Catalogue, reg prometheus.Registerer, authz auth.Authorizer, loopback http.RoundTripper) (*admissionParts, error) {
	gates, err := featureGates(o.FeatureGates)
	if err != nil {
		return nil, err
	}
	cat.SetFeatureGates(gates)
	gates.RegisterMetrics(reg)
	creator, err := newLoopbackCreator(loopback)
	if err != nil {
		return nil, err
	}
	metrics := admission.NewMetrics(reg)
	parts := &admissionParts{gates: gates, webhooks: admissionsource.NewWebhookConfigs(store, cat), policies: admissionsource.NewPolicyConfigs(store, cat), metrics: metrics,
		types: admissionsource.NewCRDTypeConverters(store, cat), sources: admissionsource.NewSources(store, cat)}
	schema := admissionsource.NewSchema(cat)
	plugins := standard.NewRegistry(standard.Options{
		Webhooks: webhooks.Options{
			Metrics:               metrics,
			DefaultConfiguration:  schema.Default,
			ValidateConfiguration: validateManifest(cat),
			Source:                parts.webhooks,
			Resolver:              newServiceResolver(o.ServiceMap, parts.sources.Services()),
			Logger:                o.Logger,
		},
		Policies: policies.Options{
			Source:                parts.policies,
			Params:                parts.sources.Params(),
			TypeConverters:        parts.types,
			Metrics:               policies.NewMetrics(reg),
			AdmissionMetrics:      metrics,
			Logger:                o.Logger,
			DefaultConfiguration:  schema.Default,
			ValidateConfiguration: validateManifest(cat),
		},
		DefaultTolerationSeconds: defaulttolerationseconds.Options{
			NotReadySeconds: o.DefaultNotReadyTolerationSeconds, UnreachableSeconds: o.DefaultUnreachableTolerationSeconds},
		PodSecurity: podsecurity.Options{Metrics: reg},
	})
	names, err := enabledPlugins(plugins, o)
	if err != nil {
		return nil, err
	}
	pc := admission.PluginContext{Context: ctx, Namespaces: parts.sources.Namespaces(), Objects: admissionsource.NewObjectLookup(store, cat),
		Schema: schema, Authorizer: admissionAuthorizer(authz), Cache: parts.sources.Objects(), Creator: creator, Status: creator, Features: gates}
	configs, err := loadAdmissionConfig(o.AdmissionControlConfigFile)
	if err != nil {
		return nil, err
	}
	if parts.chain, err = plugins.NewChain(names, pc, configs.configFor); err != nil {
		return nil, err
	}
	parts.chain.WithMetrics(metrics)
	return parts, nil
}

// enabledPlugins are the plugins o turns on: the deprecated
// --admission-control list, or the default set adjusted by
// --enable-admission-plugins and --disable-admission-plugins.
func enabledPlugins(r *admission.Registry, o Options) ([]string, error) {
	if len(o.AdmissionControl) > 0 {
		if len(o.EnableAdmissionPlugins) > 0 || len(o.DisableAdmissionPlugins) > 0 {
			return nil, fmt.Errorf("admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive")
		}
		return r.EnabledExactly(o.AdmissionControl)
	}
	return r.Enabled(o.EnableAdmissionPlugins, o.DisableAdmissionPlugins)
}

// featureGates are upstream's gates with the --feature-gates value applied.
func featureGates(value string) (*features.Gates, error) {
	g := features.New()
	if value == "" {
		return g, nil
	}
	if err := g.Set(value); err != nil {
		return nil, fmt.Errorf("invalid argument %q for \"--feature-gates\" flag: %v", value, err)
	}
	return g, nil
}

// validateManifest is the create-time API validation of a configuration
// from a static manifest. The API reserves the ".static.k8s.io" names for
// manifests, so the name is validated without that suffix.
func validateManifest(cat *registry.Catalogue) func(obj runtime.Object) error {
	return func(obj runtime.Object) error {
		res, ok := cat.LookupKind(obj.GetObjectKind().GroupVersionKind())
		if !ok {
			return fmt.Errorf("unknown kind %v", obj.GetObjectKind().GroupVersionKind())
		}
		cp := obj.DeepCopyObject()
		m, err := meta.Accessor(cp)
		if err != nil {
			return err
		}
		m.SetName(strings.TrimSuffix(m.GetName(), ".static.k8s.io"))
		return res.ValidateNew(cp).ToAggregate()
	}
}
