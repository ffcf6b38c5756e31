// Package namespaceexists is the NamespaceExists admission plugin: it
// refuses a create, update or delete in a namespace that does not exist,
// with the 404 of that namespace.
//
// Unlike upstream it reads namespaces from the server's consistent store, so
// it needs no informer, wait or live lookup. It does not look at the
// namespace's phase (NamespaceLifecycle does).
package namespaceexists

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "NamespaceExists"

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Namespaces == nil {
			return nil, fmt.Errorf("missing namespaceLister")
		}
		return New(pc.Namespaces), nil
	})
}

// Plugin is the NamespaceExists plugin.
type Plugin struct {
	namespaces admission.NamespaceLookup
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin over a namespace lookup.
func New(namespaces admission.NamespaceLookup) *Plugin { return &Plugin{namespaces: namespaces} }

// Handles CREATE, UPDATE and DELETE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete
}

// Validate refuses requests in a namespace that does not exist.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Namespace == "" || (a.Kind.Group == "" && a.Kind.Kind == "Namespace") {
		return nil
	}
	_, err := p.namespaces.GetNamespace(ctx, a.Namespace)
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return err
	default:
		return apierrors.NewInternalError(err)
	}
}
