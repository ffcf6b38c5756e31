package server

import (
	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/standard"
	"github.com/admitd/admitd/pkg/storage"
)

// newAdmissionChain builds the chain of enabled plugins in upstream order.
func newAdmissionChain(o Options, store storage.Store, cat *registry.Catalogue) (*admission.Chain, error) {
	reg := standard.NewRegistry()
	names, err := reg.Enabled(o.EnableAdmissionPlugins, o.DisableAdmissionPlugins)
	if err != nil {
		return nil, err
	}
	pc := admission.PluginContext{Namespaces: apiserver.NewNamespaceLookup(store, cat)}
	return reg.NewChain(names, pc, nil)
}
