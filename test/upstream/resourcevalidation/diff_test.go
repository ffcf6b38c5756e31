// Package resourcevalidation compares admitd's strategies of the five
// resource.k8s.io/v1 kinds (internal/registry: decoding defaults, then the
// preparation and validation of a create, an update or a status write of a
// ResourceClaim or DeviceTaintRule, and the warnings) with
// kube-apiserver's: v1 defaulting (pkg/apis/resource/v1), then the
// strategies of pkg/registry/resource/{deviceclass,devicetaintrule,
// resourceclaim,resourceclaimtemplate,resourceslice} (and the claim's and
// taint rule's status strategies) through k8s.io/apiserver's
// rest.ValidateCreate and rest.ValidateUpdate, which add the common
// metadata checks and 1.37's declarative validation (beta rules enforced),
// on the internal objects kube-apiserver decodes, with every feature gate
// at its default.
//
// The checks upstream's claim strategies make of the cluster (the
// namespace's admin-access label, the binding and driver permissions) pass
// on both sides: the namespace is labelled and every permission held;
// admitd runs them in the server (internal/server tests them).
//
// Compared: the defaulted object, the object as prepared for storage
// (taint times set from each side's clock made equal when within a
// second), every error (type, field, detail, message; in order, but for
// metadata errors on update, compared as sets, and for errors under a map
// (attributes, capacity, counters, allocatable resources), which both
// sides report in map order) and the warnings.
package resourcevalidation

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	"k8s.io/kubernetes/pkg/registry/resource/deviceclass"
	"k8s.io/kubernetes/pkg/registry/resource/devicetaintrule"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaimtemplate"
	"k8s.io/kubernetes/pkg/registry/resource/resourceslice"

	"testing"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/strategydiff"
)

func TestMain(m *testing.M) {
	quietklog.SilenceErrors()
	os.Exit(m.Run())
}

// allowAll holds every permission.
type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// adminNamespace is the namespace of the compared claims, labelled for
// admin access.
const adminNamespace = "default"

var namespaces = fake.NewSimpleClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: adminNamespace,
	Labels: map[string]string{"resource.kubernetes.io/admin-access": "true"}}}).CoreV1().Namespaces()

var (
	claimStrategy    = resourceclaim.NewStrategy(namespaces, allowAll{})
	templateStrategy = resourceclaimtemplate.NewStrategy(namespaces)
)

// upstreamStrategy is the strategy of obj's kind (its status strategy for a
// status write), with its resource and a new v1 object of its type.
func upstreamStrategy(obj runtime.Object, status bool) (s strategydiff.Strategy, resource string, blank runtime.Object) {
	switch obj.(type) {
	case *resourcev1.DeviceClass:
		return deviceclass.Strategy, "deviceclasses", &resourcev1.DeviceClass{}
	case *resourcev1.DeviceTaintRule:
		if status {
			return devicetaintrule.StatusStrategy, "devicetaintrules", &resourcev1.DeviceTaintRule{}
		}
		return devicetaintrule.Strategy, "devicetaintrules", &resourcev1.DeviceTaintRule{}
	case *resourcev1.ResourceClaim:
		if status {
			return resourceclaim.NewStatusStrategy(claimStrategy), "resourceclaims", &resourcev1.ResourceClaim{}
		}
		return claimStrategy, "resourceclaims", &resourcev1.ResourceClaim{}
	case *resourcev1.ResourceClaimTemplate:
		return templateStrategy, "resourceclaimtemplates", &resourcev1.ResourceClaimTemplate{}
	case *resourcev1.ResourceSlice:
		return resourceslice.Strategy, "resourceslices", &resourcev1.ResourceSlice{}
	}
	panic(fmt.Sprintf("not a resource.k8s.io object: %T", obj))
}

// mapOrdered: errors of a map's entries (and of a map's keys, reported
// at the map) come in map order on both sides.
func mapOrdered(f string) bool {
	for _, m := range []string{".attributes", ".capacity", ".counters", ".nodeAllocatableResources"} {
		if strings.Contains(f, m+"[") || strings.HasSuffix(f, m) {
			return true
		}
	}
	return false
}

var differ = strategydiff.Differ{Group: resourcev1.GroupName, Strategy: upstreamStrategy, MapOrdered: mapOrdered,
	Normalize: sameTaintTimes}

// sameTaintTimes gives admitd's taint times upstream's where both were
// set from the clock within a second of each other.
func sameTaintTimes(up, ours runtime.Object) {
	var u, o []*resourcev1.DeviceTaint
	switch x := up.(type) {
	case *resourcev1.DeviceTaintRule:
		u, o = []*resourcev1.DeviceTaint{&x.Spec.Taint}, []*resourcev1.DeviceTaint{&ours.(*resourcev1.DeviceTaintRule).Spec.Taint}
	case *resourcev1.ResourceSlice:
		y := ours.(*resourcev1.ResourceSlice)
		for i := range min(len(x.Spec.Devices), len(y.Spec.Devices)) {
			for j := range min(len(x.Spec.Devices[i].Taints), len(y.Spec.Devices[i].Taints)) {
				u, o = append(u, &x.Spec.Devices[i].Taints[j]), append(o, &y.Spec.Devices[i].Taints[j])
			}
		}
	}
	for i := range u {
		a, b := u[i].TimeAdded, o[i].TimeAdded
		if a != nil && b != nil && !a.Equal(b) && a.Sub(b.Time).Abs() <= time.Second && time.Since(a.Time) < time.Minute {
			o[i].TimeAdded = a.DeepCopy()
		}
	}
}

type (
	write = strategydiff.Write
	tally = strategydiff.Tally
)

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	differ.Compare(t, cat, w, c)
}
