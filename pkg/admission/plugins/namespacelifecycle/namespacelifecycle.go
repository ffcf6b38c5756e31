// Package namespacelifecycle is the NamespaceLifecycle admission plugin: it
// refuses new content in namespaces that do not exist or are being
// terminated, and the deletion of the immortal system namespaces.
//
// Unlike upstream it reads namespaces from the server's consistent store, so
// it needs no informer, sleep or forced live lookup.
package namespacelifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "NamespaceLifecycle"

// immortal namespaces may never be deleted.
var immortal = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Namespaces == nil {
			return nil, fmt.Errorf("missing namespace lookup")
		}
		return &Plugin{namespaces: pc.Namespaces}, nil
	})
}

// Plugin is the NamespaceLifecycle plugin.
type Plugin struct {
	namespaces admission.NamespaceLookup
}

var _ admission.Mutator = (*Plugin)(nil)

// Handles CREATE, UPDATE and DELETE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete
}

func isNamespaceKind(a *admission.Attributes) bool {
	return a.Kind.Group == "" && a.Kind.Kind == "Namespace"
}

// Admit applies the namespace lifecycle rules.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Operation == admission.Delete && isNamespaceKind(a) && immortal[a.Name] {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf("this namespace may not be deleted"))
	}
	if a.Namespace == "" && !isNamespaceKind(a) {
		return nil
	}
	if isNamespaceKind(a) {
		return nil
	}
	if a.Operation == admission.Delete || a.Operation == admission.Update {
		return nil
	}
	if a.Resource.Group == "authorization.k8s.io" && a.Resource.Resource == "localsubjectaccessreviews" {
		return nil
	}
	ns, err := p.namespaces.GetNamespace(ctx, a.Namespace)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return err
		}
		return apierrors.NewInternalError(err)
	}
	if a.Operation == admission.Create && ns.Status.Phase == corev1.NamespaceTerminating {
		return terminating(a)
	}
	return nil
}

func terminating(a *admission.Attributes) error {
	err := admission.NewForbidden(a, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	if se, ok := err.(*apierrors.StatusError); ok {
		if se.ErrStatus.Details == nil {
			se.ErrStatus.Details = &metav1.StatusDetails{}
		}
		se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace),
			Field:   "metadata.namespace",
		})
	}
	return err
}
