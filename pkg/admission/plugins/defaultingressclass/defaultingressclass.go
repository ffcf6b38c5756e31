// Package defaultingressclass is the DefaultIngressClass admission plugin:
// an Ingress created without a class (no spec.ingressClassName and no
// kubernetes.io/ingress.class annotation) gets the cluster's default
// IngressClass. When several classes are marked default, the newest wins,
// ties going to the first name in order.
//
// It reads IngressClasses (networking.k8s.io/v1) from the server's
// watch-fed cache. It does not check that a named class exists.
package defaultingressclass

import (
	"context"
	"errors"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/defaultclass"
)

// Name is the upstream plugin name.
const Name = "DefaultIngressClass"

// The annotation that marks the default IngressClass and the annotation
// that names an Ingress's class the old way.
const (
	IsDefaultAnnotation = "ingressclass.kubernetes.io/is-default-class"
	ClassAnnotation     = "kubernetes.io/ingress.class"
)

var (
	ingressResource      = schema.GroupResource{Group: networkingv1.GroupName, Resource: "ingresses"}
	ingressClassResource = networkingv1.SchemeGroupVersion.WithResource("ingressclasses")
)

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Cache == nil {
			return nil, errors.New("missing object cache")
		}
		return New(pc.Cache), nil
	})
}

// Plugin is the DefaultIngressClass plugin.
type Plugin struct {
	cache admission.ObjectCache
}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plugin reading IngressClasses from cache.
func New(cache admission.ObjectCache) *Plugin { return &Plugin{cache: cache} }

// Handles CREATE.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Concerns reports whether the request is on Ingresses (not a
// subresource).
func (p *Plugin) Concerns(a *admission.Attributes) bool {
	return a.Resource.GroupResource() == ingressResource && a.Subresource == ""
}

// Admit sets the default class of a new Ingress that names none.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	ing, ok := a.Object.(*networkingv1.Ingress)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("Expected Ingress resource, got: %v", a.Kind))
	}
	if ing.Spec.IngressClassName != nil {
		return nil
	}
	if _, ok := ing.Annotations[ClassAnnotation]; ok {
		return nil
	}
	def, err := p.defaultClass(ctx)
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if def != "" {
		ing.Spec.IngressClassName = &def
	}
	return nil
}

// defaultClass names the default IngressClass, or "" when there is none.
func (p *Plugin) defaultClass(ctx context.Context) (string, error) {
	return defaultclass.Name(ctx, p.cache, ingressClassResource, func(c *networkingv1.IngressClass) bool {
		return c.Annotations[IsDefaultAnnotation] == "true"
	})
}
