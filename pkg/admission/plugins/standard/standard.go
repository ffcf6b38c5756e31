// Package standard lists every compiled-in admission plugin admitd has, in
// one place. Importing it and calling RegisterAll gives a registry with all
// of them.
package standard

import (
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/namespacelifecycle"
)

// RegisterAll registers every plugin admitd implements.
func RegisterAll(r *admission.Registry) {
	namespacelifecycle.Register(r)
}

// NewRegistry returns a registry with every plugin.
func NewRegistry() *admission.Registry {
	r := admission.NewRegistry()
	RegisterAll(r)
	return r
}
