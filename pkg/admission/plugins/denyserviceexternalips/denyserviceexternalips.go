// Package denyserviceexternalips is the DenyServiceExternalIPs admission
// plugin: it refuses Services that add external IPs. An update may keep or
// drop the external IPs a Service already has, never add one.
//
// It only looks at spec.externalIPs; it is not a policy on load balancer
// addresses.
package denyserviceexternalips

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "DenyServiceExternalIPs"

var serviceResource = schema.GroupResource{Resource: "services"}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(admission.PluginContext) (admission.Handler, error) {
		return New(), nil
	})
}

// Plugin is the DenyServiceExternalIPs plugin.
type Plugin struct{}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin.
func New() *Plugin { return &Plugin{} }

// Handles CREATE and UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate refuses external IPs the Service did not have before.
func (p *Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	if a.Resource.GroupResource() != serviceResource || a.Subresource != "" {
		return nil
	}
	svc, ok := a.Object.(*corev1.Service)
	if !ok {
		return notService(a)
	}
	var old *corev1.Service
	if a.OldObject != nil {
		if old, ok = a.OldObject.(*corev1.Service); !ok {
			return notService(a)
		}
	}
	if onlyKnownIPs(svc, old) {
		return nil
	}
	return admission.NewForbidden(a, fmt.Errorf("Use of external IPs is denied by admission control"))
}

func notService(a *admission.Attributes) error {
	return apierrors.NewInternalError(fmt.Errorf("Expected Service resource, got: %v", a.Kind))
}

// onlyKnownIPs reports whether every external IP of svc was already one of
// old's (old is nil on create).
func onlyKnownIPs(svc, old *corev1.Service) bool {
	if len(svc.Spec.ExternalIPs) == 0 {
		return true
	}
	if old == nil {
		return false
	}
	known := make(map[string]bool, len(old.Spec.ExternalIPs))
	for _, ip := range old.Spec.ExternalIPs {
		known[ip] = true
	}
	for _, ip := range svc.Spec.ExternalIPs {
		if !known[ip] {
			return false
		}
	}
	return true
}
