package quota

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

var resourceClaimsResource = schema.GroupResource{Group: resourcev1.GroupName, Resource: "resourceclaims"}

var resourceClaimsCount = ObjectCountName(resourceClaimsResource)

type resourceClaims struct{}

// NewResourceClaims returns the evaluator of resource.k8s.io
// ResourceClaims, as upstream's: the claim count, the devices a claim may
// get of each device class (<class>.deviceclass.resource.k8s.io/devices)
// and as many of the class's implicit extended resource
// (requests.deviceclass.resource.kubernetes.io/<class>), which the pod
// evaluator tracks and so counts towards a quota naming it.
//
// Not modelled: upstream's evaluator reads the device classes: it also
// charges a class's spec.extendedResourceName, tracks the extended
// resource names of existing classes itself (so that admission checks a
// claim against a quota naming only them), and exempts the devices a
// claim made by kube-scheduler for a pod's extended resources shares with
// the pod's own usage.
func NewResourceClaims() Evaluator { return resourceClaims{} }

func (resourceClaims) GroupResource() schema.GroupResource { return resourceClaimsResource }

// Handles creates and updates of the main resource.
func (resourceClaims) Handles(a *admission.Attributes) bool {
	return a.Subresource == "" && (a.Operation == admission.Create || a.Operation == admission.Update)
}

func (resourceClaims) Matches(q *corev1.ResourceQuota, obj runtime.Object) (bool, error) {
	return matches(q, obj, resourceClaimTracks, noScopes)
}

// resourceClaimTracks: the claim count and any class's devices.
func resourceClaimTracks(n corev1.ResourceName) bool {
	return n == resourceClaimsCount || strings.HasSuffix(string(n), corev1.ResourceClaimsPerClass)
}

func (resourceClaims) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	out := []corev1.ResourceName{}
	for _, n := range input {
		if resourceClaimTracks(n) {
			out = append(out, n)
		}
	}
	return out
}

func (resourceClaims) MatchingScopes(runtime.Object, []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (resourceClaims) UncoveredScopes(_, _ []corev1.ScopedResourceSelectorRequirement) []corev1.ScopedResourceSelectorRequirement {
	return []corev1.ScopedResourceSelectorRequirement{}
}

func (resourceClaims) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

// Usage charges one claim and, per class, the devices its requests may
// get: an exact request its count (all devices: the most an allocation
// holds), a request with alternatives the most any alternative of the
// class may get.
func (resourceClaims) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	claim, ok := obj.(*resourcev1.ResourceClaim)
	if !ok {
		return corev1.ResourceList{}, fmt.Errorf("expect %T, got %v", &resourcev1.ResourceClaim{}, obj)
	}
	out := corev1.ResourceList{resourceClaimsCount: one()}
	add := func(class string, n int64) {
		name := corev1.ResourceName(class + corev1.ResourceClaimsPerClass)
		q := out[name]
		q.Add(*resource.NewQuantity(n, resource.DecimalSI))
		out[name] = q
	}
	for _, r := range claim.Spec.Devices.Requests {
		switch {
		case len(r.FirstAvailable) > 0:
			most := map[string]int64{}
			for _, s := range r.FirstAvailable {
				if n := devicesOf(s.AllocationMode, s.Count); n > most[s.DeviceClassName] {
					most[s.DeviceClassName] = n
				}
			}
			for class, n := range most {
				add(class, n)
			}
		case r.Exactly != nil:
			add(r.Exactly.DeviceClassName, devicesOf(r.Exactly.AllocationMode, r.Exactly.Count))
		}
	}
	chargeImplicitExtended(out)
	return out, nil
}

// devicesOf is the most devices a request may get; an unknown mode none.
func devicesOf(mode resourcev1.DeviceAllocationMode, count int64) int64 {
	switch mode {
	case resourcev1.DeviceAllocationModeExactCount:
		return count
	case resourcev1.DeviceAllocationModeAll:
		return resourcev1.AllocationResultsMaxSize
	}
	return 0
}

// chargeImplicitExtended adds to a claim's usage, for each class with
// devices, the class's implicit extended resource.
func chargeImplicitExtended(usage corev1.ResourceList) {
	for name, q := range usage {
		class, ok := strings.CutSuffix(string(name), corev1.ResourceClaimsPerClass)
		if ok && class != "" && q.Sign() > 0 {
			usage[corev1.ResourceName(corev1.ResourceImplicitExtendedClaimsPerClass+class)] = q.DeepCopy()
		}
	}
}

// AlsoCharges: a claim's usage names implicit extended resources it does
// not track; they count where another evaluator tracks them.
func (resourceClaims) AlsoCharges(n corev1.ResourceName) bool {
	return strings.HasPrefix(string(n), corev1.ResourceImplicitExtendedClaimsPerClass)
}
