// Package namespaceautoprovision is the NamespaceAutoProvision admission
// plugin: a create in a namespace that does not exist first creates that
// namespace, through the server's loopback client as upstream does.
//
// The namespace is created even when a later plugin refuses the request, and
// is not created for a dry run. Unlike upstream it reads namespaces from the
// server's consistent store, so it needs no informer nor wait for one; it
// does not decide whether the request itself is admitted.
package namespaceautoprovision

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "NamespaceAutoProvision"

var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Namespaces == nil {
			return nil, fmt.Errorf("missing namespaceLister")
		}
		if pc.Creator == nil {
			return nil, fmt.Errorf("missing client")
		}
		return New(pc.Namespaces, pc.Creator), nil
	})
}

// Plugin is the NamespaceAutoProvision plugin.
type Plugin struct {
	namespaces admission.NamespaceLookup
	creator    admission.ObjectCreator
}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plugin over a namespace lookup and an object creator.
func New(namespaces admission.NamespaceLookup, creator admission.ObjectCreator) *Plugin {
	return &Plugin{namespaces: namespaces, creator: creator}
}

// Handles CREATE.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit creates the request's namespace when it does not exist.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.DryRun {
		return nil
	}
	if a.Namespace == "" || (a.Kind.Group == "" && a.Kind.Kind == "Namespace") {
		return nil
	}
	_, err := p.namespaces.GetNamespace(ctx, a.Namespace)
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return admission.NewForbidden(a, err)
	}
	ns := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: a.Namespace},
	}
	if err := p.creator.CreateObject(ctx, namespacesResource, "", ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return admission.NewForbidden(a, err)
	}
	return nil
}
