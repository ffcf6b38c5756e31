package server

import (
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

// newAdmission builds the chain of enabled plugins in upstream order, with
// the webhook plugins reading configurations from storage.
func newAdmission(o Options, store storage.Store, cat *registry.Catalogue) (*admissionParts, error) {
	parts := &admissionParts{webhooks: apiserver.NewWebhookConfigs(store, cat)}
	reg := standard.NewRegistry()
	webhooks.Register(reg, webhooks.Options{
		Source:   parts.webhooks,
		Resolver: newServiceResolver(o.ServiceMap, apiserver.NewServiceLookup(store, cat)),
		Logger:   o.Logger,
	})
	names, err := reg.Enabled(o.EnableAdmissionPlugins, o.DisableAdmissionPlugins)
	if err != nil {
		return nil, err
	}
	pc := admission.PluginContext{Namespaces: apiserver.NewNamespaceLookup(store, cat), Schema: apiserver.NewSchema(cat)}
	if parts.chain, err = reg.NewChain(names, pc, nil); err != nil {
		return nil, err
	}
	return parts, nil
}
