// Package runtimeclass is the RuntimeClass admission plugin: a Pod that
// names a RuntimeClass gets the class's pod overhead (and is refused when
// it sets a different one), the class's scheduling node selector merged
// into its own and the class's tolerations; a Pod that sets an overhead
// its class does not define is refused.
//
// It reads RuntimeClasses from the plugin context's watch-fed cache; it
// does not check that a node runs the class's handler.
package runtimeclass

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/internal/tolerations"
)

// Name is the upstream plugin name.
const Name = "RuntimeClass"

// runtimeClasses is the resource RuntimeClasses are read from.
var runtimeClasses = schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		if pc.Cache == nil {
			return nil, fmt.Errorf("missing RuntimeClass lister")
		}
		return New(pc.Cache), nil
	})
}

// Plugin is the RuntimeClass plugin.
type Plugin struct {
	cache admission.ObjectCache
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plugin reading RuntimeClasses from cache.
func New(cache admission.ObjectCache) *Plugin { return &Plugin{cache: cache} }

// Handles CREATE.
func (*Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

func ignored(a *admission.Attributes) bool {
	return a.Subresource != "" || a.Resource.Group != "" || a.Resource.Resource != "pods"
}

// Admit sets the pod's overhead and merges the class's scheduling
// constraints into the pod.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if ignored(a) {
		return nil
	}
	pod, rc, err := p.prepare(ctx, a)
	if err != nil {
		return err
	}
	if err := setOverhead(a, pod, rc); err != nil {
		return err
	}
	return setScheduling(a, pod, rc)
}

// Validate refuses a pod whose overhead is not its class's.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if ignored(a) {
		return nil
	}
	pod, rc, err := p.prepare(ctx, a)
	if err != nil {
		return err
	}
	if rc != nil && rc.Overhead != nil {
		if !equality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return admission.NewForbidden(a, fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
		return nil
	}
	if pod.Spec.Overhead != nil {
		return admission.NewForbidden(a, fmt.Errorf("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
	}
	return nil
}

// prepare returns the pod and its RuntimeClass (nil when it names none).
// The class is shared with the cache and must not be modified.
func (p *Plugin) prepare(ctx context.Context, a *admission.Attributes) (*corev1.Pod, *nodev1.RuntimeClass, error) {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if pod.Spec.RuntimeClassName == nil {
		return pod, nil, nil
	}
	name := *pod.Spec.RuntimeClassName
	obj, err := p.cache.GetCachedObject(ctx, runtimeClasses, "", name)
	if apierrors.IsNotFound(err) {
		return pod, nil, admission.NewForbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", name))
	}
	if err != nil {
		return pod, nil, err
	}
	rc, ok := obj.(*nodev1.RuntimeClass)
	if !ok {
		return pod, nil, apierrors.NewInternalError(fmt.Errorf("unexpected RuntimeClass type %T", obj))
	}
	return pod, rc, nil
}

func setOverhead(a *admission.Attributes, pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if rc == nil || rc.Overhead == nil {
		return nil
	}
	if len(pod.Spec.Overhead) > 0 && !equality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
		return admission.NewForbidden(a, fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
	}
	pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	return nil
}

func setScheduling(a *admission.Attributes, pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if rc == nil || rc.Scheduling == nil {
		return nil
	}
	classSelector := rc.Scheduling.NodeSelector
	selector := pod.Spec.NodeSelector
	if selector == nil {
		if classSelector != nil {
			selector = make(map[string]string, len(classSelector))
		}
	} else {
		// In key order: upstream reports one of the conflicting keys, in
		// map order; this is one of its answers.
		keys := make([]string, 0, len(classSelector))
		for k := range classSelector {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v, ok := selector[k]; ok && v != classSelector[k] {
				return admission.NewForbidden(a, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, classSelector[k], k, v))
			}
		}
	}
	for k, v := range classSelector {
		selector[k] = v
	}
	classTolerations := make([]corev1.Toleration, len(rc.Scheduling.Tolerations))
	for i := range rc.Scheduling.Tolerations {
		rc.Scheduling.Tolerations[i].DeepCopyInto(&classTolerations[i])
	}
	pod.Spec.NodeSelector = selector
	pod.Spec.Tolerations = tolerations.Merge(pod.Spec.Tolerations, classTolerations)
	return nil
}
