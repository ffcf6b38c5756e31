// Package podresizevalidator is the PodResizeValidator admission plugin: it
// refuses a resize (an update of pods/resize that changes the spec of a
// bound pod) that its node cannot run: a node labelled with another
// kubernetes.io/os than linux, or one whose allocatable cpu or memory is
// less than the pod's requests.
//
// It acts only when the InPlacePodVerticalScaling feature gate is on (GA
// and locked on in 1.37). It reads nodes from the server's watch-fed cache.
package podresizevalidator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-helpers/resource"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/features"
)

// Name is the upstream plugin name.
const Name = "PodResizeValidator"

// The causes a refusal carries, as upstream names them.
const (
	ReasonNodeCapacity        metav1.CauseType = "NodeCapacity"
	ReasonUnsupportedPlatform metav1.CauseType = "UnsupportedPlatform"
)

var nodesResource = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Cache == nil {
			return nil, fmt.Errorf("missing node lister for %s", Name)
		}
		return New(pc.Cache, pc.Gates().Enabled(features.InPlacePodVerticalScaling)), nil
	})
}

// Plugin is the PodResizeValidator plugin.
type Plugin struct {
	nodes   admission.ObjectCache
	enabled bool
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin reading nodes from nodes; it does nothing unless
// enabled.
func New(nodes admission.ObjectCache, enabled bool) *Plugin {
	return &Plugin{nodes: nodes, enabled: enabled}
}

// Handles UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Update }

// Concerns reports whether the gate is on and the request is an update of
// a pod's resize subresource.
func (p *Plugin) Concerns(a *admission.Attributes) bool {
	return p.enabled && a.Operation == admission.Update && a.Resource.Group == "" && a.Resource.Resource == "pods" && a.Subresource == "resize"
}

// Validate checks a resize against the pod's node.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if !p.Concerns(a) {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected a pod but got a %T", a.Object))
	}
	if pod.Spec.NodeName == "" {
		return nil
	}
	old, ok := a.OldObject.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected an old pod but got a %T", a.OldObject))
	}
	if old.Generation == pod.Generation {
		return nil // the spec did not change
	}
	obj, err := p.nodes.GetCachedObject(ctx, nodesResource, "", pod.Spec.NodeName)
	if apierrors.IsNotFound(err) {
		return admission.NewForbidden(a, fmt.Errorf("node %q not found", pod.Spec.NodeName))
	}
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to get node %q: %w", pod.Spec.NodeName, err))
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("failed to get node %q: unexpected object %T", pod.Spec.NodeName, obj))
	}
	if os, ok := node.Labels[corev1.LabelOSStable]; ok && os != "linux" {
		return refuse(a, fmt.Errorf("pod resize is only supported on linux nodes, node %q is %q", node.Name, os), ReasonUnsupportedPlatform)
	}
	if err := fits(pod, node.Status.Allocatable); err != nil {
		return refuse(a, err, ReasonNodeCapacity)
	}
	return nil
}

// refuse is the 403 with the cause clients look for.
func refuse(a *admission.Attributes, err error, reason metav1.CauseType) error {
	forbidden := admission.NewForbidden(a, err)
	var se *apierrors.StatusError
	if errors.As(forbidden, &se) && se.ErrStatus.Details != nil {
		se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{Type: reason})
	}
	return forbidden
}

// fits reports the cpu and memory the pod requests beyond allocatable.
func fits(pod *corev1.Pod, allocatable corev1.ResourceList) error {
	cpu, mem := allocatable.Cpu(), allocatable.Memory()
	req := resource.PodRequests(pod, resource.PodResourcesOptions{})
	reqCPU, reqMem := req[corev1.ResourceCPU], req[corev1.ResourceMemory]
	var msg []string
	if reqCPU.Cmp(*cpu) > 0 {
		msg = append(msg, fmt.Sprintf("cpu, requested: %d, allocatable: %d", reqCPU.MilliValue(), cpu.MilliValue()))
	}
	if reqMem.Cmp(*mem) > 0 {
		msg = append(msg, fmt.Sprintf("memory, requested: %d, allocatable: %d", reqMem.Value(), mem.Value()))
	}
	if len(msg) > 0 {
		return fmt.Errorf("node didn't have enough allocatable resources: %s", strings.Join(msg, "; "))
	}
	return nil
}
