package nodedeclaredfeaturevalidator

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/dranodeallocatableresources"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/admitd/admitd/pkg/admission"
)

// validateResourceSlice refuses a slice whose devices with node allocatable
// resources map to nodes that do not declare DRANodeAllocatableResources.
// It reads resource.k8s.io/v1 ResourceSlices.
func (p *Plugin) validateResourceSlice(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Create && a.Operation != admission.Update {
		return nil
	}
	slice, ok := a.Object.(*resourcev1.ResourceSlice)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected a ResourceSlice but got a %T", a.Object))
	}
	if !p.o.DRANodeAllocatableResources {
		return nil
	}
	var all []*corev1.Node
	var allErr error
	listed := false
	list := func() ([]*corev1.Node, error) { // once per request
		if !listed {
			all, allErr = p.nodes(ctx)
			listed = true
		}
		return all, allErr
	}
	perDevice := slice.Spec.PerDeviceNodeSelection != nil && *slice.Spec.PerDeviceNodeSelection
	for _, dev := range slice.Spec.Devices {
		if len(dev.NodeAllocatableResources) == 0 {
			continue
		}
		nodeName, selector, allNodes := slice.Spec.NodeName, slice.Spec.NodeSelector, slice.Spec.AllNodes
		if perDevice {
			nodeName, selector, allNodes = dev.NodeName, dev.NodeSelector, dev.AllNodes
		}
		single := ""
		switch {
		case nodeName != nil && *nodeName != "":
			single, selector, allNodes = *nodeName, nil, nil
		case selector != nil:
			allNodes = nil
		case allNodes != nil && *allNodes:
		default:
			return admission.NewForbidden(a, fmt.Errorf("device %q in ResourceSlice has NodeAllocatableResources but does not map to any nodes", dev.Name))
		}
		if single != "" {
			node, err := p.node(ctx, single)
			if apierrors.IsNotFound(err) {
				return admission.NewForbidden(a, fmt.Errorf("node %q not found for device %q", single, dev.Name))
			}
			if err != nil {
				return admission.NewForbidden(a, fmt.Errorf("failed to get node %q for device %q: %w", single, dev.Name, err))
			}
			if err := declares(a, node); err != nil {
				return err
			}
			continue
		}
		nodes, err := list()
		if err != nil {
			return admission.NewForbidden(a, fmt.Errorf("failed to list nodes for device %q: %w", dev.Name, err))
		}
		if err := p.checkNodes(a, nodes, selector, allNodes != nil && *allNodes); err != nil {
			return err
		}
	}
	return nil
}

func (p *Plugin) checkNodes(a *admission.Attributes, nodes []*corev1.Node, sel *corev1.NodeSelector, allNodes bool) error {
	var selector *nodeaffinity.NodeSelector
	if sel != nil {
		var err error
		if selector, err = nodeaffinity.NewNodeSelector(sel); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("failed to create node selector: %v", err))
		}
	}
	for _, n := range nodes {
		if allNodes || (selector != nil && selector.Match(n)) {
			if err := declares(a, n); err != nil {
				return err
			}
		}
	}
	return nil
}

func declares(a *admission.Attributes, n *corev1.Node) error {
	if !slices.Contains(n.Status.DeclaredFeatures, dranodeallocatableresources.DRANodeAllocatableResourcesFeature) {
		return admission.NewForbidden(a, fmt.Errorf("node %q does not support %s feature", n.Name, dranodeallocatableresources.DRANodeAllocatableResourcesFeature))
	}
	return nil
}
