// Package limitpodhardantiaffinitytopology is the
// LimitPodHardAntiAffinityTopology admission plugin: it refuses pods whose
// required pod anti-affinity terms use a topology key other than
// kubernetes.io/hostname.
//
// Preferred terms and pod affinity are not limited.
package limitpodhardantiaffinitytopology

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

// Name is the upstream plugin name.
const Name = "LimitPodHardAntiAffinityTopology"

var podsResource = schema.GroupResource{Resource: "pods"}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(admission.PluginContext) (admission.Handler, error) { return Plugin{}, nil })
}

// Plugin is the LimitPodHardAntiAffinityTopology plugin.
type Plugin struct{}

var _ admission.Validator = Plugin{}

// Handles CREATE and UPDATE.
func (Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate refuses a required anti-affinity term on any topology but the
// node's host name.
func (Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	if a.Subresource != "" || a.Resource.GroupResource() != podsResource {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	aff := pod.Spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil {
		return nil
	}
	for _, term := range aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if term.TopologyKey != corev1.LabelHostname {
			// Upstream names the pod, not the request: a generated name is
			// still empty here.
			return apierrors.NewForbidden(a.Resource.GroupResource(), pod.Name,
				fmt.Errorf("affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey %v but only key %v is allowed", term.TopologyKey, corev1.LabelHostname))
		}
	}
	return nil
}
