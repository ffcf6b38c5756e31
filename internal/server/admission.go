package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/standard"
	"github.com/admitd/admitd/pkg/admission/webhooks"
	"github.com/admitd/admitd/pkg/storage"
)

// admissionParts are the admission chain and the caches that feed it.
type admissionParts struct {
	chain    *admission.Chain
	webhooks *apiserver.WebhookConfigs
}

// newMetricsRegistry returns the registry served on /metrics, with the Go
// and process collectors.
func newMetricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// newAdmission builds the chain of enabled plugins in upstream order, with
// the webhook plugins reading configurations from storage.
func newAdmission(o Options, store storage.Store, cat *registry.Catalogue, reg prometheus.Registerer) (*admissionParts, error) {
	parts := &admissionParts{webhooks: apiserver.NewWebhookConfigs(store, cat)}
	metrics := admission.NewMetrics(reg)
	plugins := standard.NewRegistry()
	webhooks.Register(plugins, webhooks.Options{
		Metrics:  metrics,
		Source:   parts.webhooks,
		Resolver: newServiceResolver(o.ServiceMap, apiserver.NewServiceLookup(store, cat)),
		Logger:   o.Logger,
	})
	names, err := plugins.Enabled(o.EnableAdmissionPlugins, o.DisableAdmissionPlugins)
	if err != nil {
		return nil, err
	}
	pc := admission.PluginContext{Namespaces: apiserver.NewNamespaceLookup(store, cat), Schema: apiserver.NewSchema(cat)}
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
