// Package podgroupprotection is the PodGroupProtection admission plugin: it
// adds the scheduling.k8s.io/podgroup-protection finalizer to every PodGroup
// created (scheduling.k8s.io v1alpha3 or v1beta1), so that a PodGroup is not
// deleted while pods still use it (a controller removes the finalizer).
//
// It acts only when the GenericWorkload feature gate is on (off by default
// in 1.37). admitd serves no podgroups resource yet: the plugin is complete
// but no request reaches it until one is served.
package podgroupprotection

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/features"
)

// Name is the upstream plugin name.
const Name = "PodGroupProtection"

// Finalizer is the finalizer the plugin adds.
const Finalizer = "scheduling.k8s.io/podgroup-protection"

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		return New(pc.Gates().Enabled(features.GenericWorkload)), nil
	})
}

// Plugin is the PodGroupProtection plugin.
type Plugin struct {
	enabled bool
}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plugin; it does nothing unless enabled.
func New(enabled bool) *Plugin { return &Plugin{enabled: enabled} }

// Handles CREATE.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Concerns reports whether the gate is on and the request is on PodGroups
// (not a subresource).
func (p *Plugin) Concerns(a *admission.Attributes) bool {
	return p.enabled && a.Resource.Group == "scheduling.k8s.io" && a.Resource.Resource == "podgroups" && a.Subresource == ""
}

// Admit adds the finalizer to a new PodGroup that lacks it.
func (p *Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	if a.Kind.Group != "scheduling.k8s.io" || a.Kind.Kind != "PodGroup" {
		return nil // upstream ignores any other object
	}
	m, err := meta.Accessor(a.Object)
	if err != nil {
		return nil
	}
	if f := m.GetFinalizers(); !slices.Contains(f, Finalizer) {
		m.SetFinalizers(append(f, Finalizer))
	}
	return nil
}
