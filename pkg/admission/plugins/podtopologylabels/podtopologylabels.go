// Package podtopologylabels is the PodTopologyLabels admission plugin: when
// a pod is bound to a node (a pods/binding create, or a pod created with
// spec.nodeName), it copies the node's topology.kubernetes.io/zone and
// topology.kubernetes.io/region labels onto the pod (through the Binding's
// labels, which the binding merges into the pod).
//
// It acts only when the PodTopologyLabelsAdmission feature gate is on (the
// 1.37 default). It reads nodes from the server's watch-fed cache and never
// refuses a request for a missing node.
package podtopologylabels

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/features"
)

// Name is the upstream plugin name.
const Name = "PodTopologyLabels"

// Labels are the node labels copied, as kube-apiserver configures the plugin.
var Labels = []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion}

var nodesResource = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Cache == nil {
			return nil, fmt.Errorf("missing object cache")
		}
		return New(pc.Cache, pc.Gates().Enabled(features.PodTopologyLabelsAdmission)), nil
	})
}

// Plugin is the PodTopologyLabels plugin.
type Plugin struct {
	nodes   admission.ObjectCache
	enabled bool
}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plugin reading nodes from nodes; it does nothing unless
// enabled.
func New(nodes admission.ObjectCache, enabled bool) *Plugin {
	return &Plugin{nodes: nodes, enabled: enabled}
}

// Handles CREATE.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit copies the topology labels of the pod's node.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if !p.enabled || a.Resource.Group != "" || a.Resource.Resource != "pods" {
		return nil
	}
	var target *map[string]string
	var node string
	switch a.Subresource {
	case "":
		pod, ok := a.Object.(*corev1.Pod)
		if !ok {
			return fmt.Errorf("expected Pod but got %T", a.Object)
		}
		target, node = &pod.Labels, pod.Spec.NodeName
	case "binding":
		b, ok := a.Object.(*corev1.Binding)
		if !ok {
			return fmt.Errorf("expected Binding but got %s", a.Kind.Kind)
		}
		if b.Target.Kind != "Node" {
			return nil
		}
		target, node = &b.Labels, b.Target.Name
	default:
		return nil
	}
	if a.Subresource == "" && node == "" {
		return nil // not scheduled yet
	}
	labels, err := p.topologyLabels(ctx, node)
	if err != nil || len(labels) == 0 {
		return err
	}
	if *target == nil {
		*target = make(map[string]string, len(labels))
	}
	for k, v := range labels {
		(*target)[k] = v
	}
	return nil
}

// topologyLabels are the copied labels of the named node; none when it
// does not exist.
func (p *Plugin) topologyLabels(ctx context.Context, name string) (map[string]string, error) {
	obj, err := p.nodes.GetCachedObject(ctx, nodesResource, "", name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, fmt.Errorf("unexpected node object %T", obj)
	}
	out := map[string]string{}
	for _, k := range Labels {
		if v, ok := node.Labels[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}
