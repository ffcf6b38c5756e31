// Package taintnodesbycondition is the TaintNodesByCondition admission
// plugin: a Node being created gets the node.kubernetes.io/not-ready
// NoSchedule taint, so that nothing is scheduled on it before the node
// lifecycle controller has seen it ready.
//
// It only adds the taint; removing it is the controller's job.
package taintnodesbycondition

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "TaintNodesByCondition"

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(admission.PluginContext) (admission.Handler, error) { return Plugin{}, nil })
}

// Plugin is the TaintNodesByCondition plugin.
type Plugin struct{}

var _ admission.Mutator = Plugin{}

// Handles CREATE.
func (Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Concerns reports whether the request is on nodes (not a subresource).
func (Plugin) Concerns(a *admission.Attributes) bool {
	return a.Resource.Group == "" && a.Resource.Resource == "nodes" && a.Subresource == ""
}

// Admit appends the not-ready taint to a new Node that has no taint of
// that key and effect.
func (p Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	node, ok := a.Object.(*corev1.Node)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady && t.Effect == corev1.TaintEffectNoSchedule {
			return nil
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	return nil
}
