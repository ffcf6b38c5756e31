// Package extendedresourcetoleration is the ExtendedResourceToleration
// admission plugin: a Pod that requests an extended resource (such as
// example.com/gpu) tolerates the NoSchedule taint of that name, so that
// nodes with such devices can be tainted to keep other pods away.
//
// It reads no cluster state; it does not check that the resource exists.
package extendedresourcetoleration

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "ExtendedResourceToleration"

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(admission.PluginContext) (admission.Handler, error) { return Plugin{}, nil })
}

// Plugin is the ExtendedResourceToleration plugin.
type Plugin struct{}

var _ admission.Mutator = Plugin{}

// Handles CREATE and UPDATE.
func (Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit adds a NoSchedule toleration for each extended resource the pod's
// containers and init containers request, in name order.
func (Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.Group != "" || a.Resource.Resource != "pods" {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected *core.Pod but got %T", a.Object))
	}
	names := map[string]bool{}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			for name := range c.Resources.Requests {
				if IsExtendedResourceName(name) {
					names[string(name)] = true
				}
			}
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		addOrReplace(pod, corev1.Toleration{Key: n, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	return nil
}

// addOrReplace replaces every toleration of the same key, operator, value
// and effect by t (dropping any tolerationSeconds), or appends t when there
// is none. Upstream compares the pointer to t with each toleration to skip
// an identical one, which never matches, so an identical one is replaced
// too (by an equal value); the result is the same.
func addOrReplace(pod *corev1.Pod, t corev1.Toleration) {
	replaced := false
	out := make([]corev1.Toleration, 0, len(pod.Spec.Tolerations)+1)
	for _, have := range pod.Spec.Tolerations {
		if have.Key == t.Key && have.Operator == t.Operator && have.Value == t.Value && have.Effect == t.Effect {
			out = append(out, t)
			replaced = true
			continue
		}
		out = append(out, have)
	}
	if !replaced {
		out = append(out, t)
	}
	pod.Spec.Tolerations = out
}

// IsExtendedResourceName reports whether name is an extended resource: a
// prefixed name outside kubernetes.io, not starting with "requests.",
// whose quota name "requests.<name>" is a qualified name.
func IsExtendedResourceName(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) {
		return false
	}
	if strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
}
