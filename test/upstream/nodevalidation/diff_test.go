// Package nodevalidation compares admitd's strategies of the kinds that
// describe nodes and their use (internal/registry: decoding defaults, then
// the preparation and validation of a create, an update or a status
// write) with kube-apiserver's: v1 defaulting, then the strategies of
// pkg/registry/core/node (and its status strategy),
// pkg/registry/node/runtimeclass and pkg/registry/coordination/lease
// through k8s.io/apiserver's rest.ValidateCreate and rest.ValidateUpdate,
// which add the common metadata checks and 1.37's declarative validation
// (a Node's podPreemptionPolicy, a RuntimeClass's handler), on the
// internal objects kube-apiserver decodes, with every feature gate at its
// default.
//
// Compared: the defaulted object, the object as prepared for storage, every
// error (type, field, detail, message; in order, but for metadata errors
// on update, compared as sets as upstream checks metadata several times,
// and a Node's capacity and allocatable errors, which upstream reports in
// map order) and the warnings of valid writes of the main resource.
package nodevalidation

import (
	"fmt"
	"os"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/runtime"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	"k8s.io/kubernetes/pkg/registry/coordination/lease"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/node/runtimeclass"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/strategydiff"
)

func TestMain(m *testing.M) {
	quietklog.SilenceErrors()
	os.Exit(m.Run())
}

// upstreamStrategy is the strategy of obj's kind (its status strategy for a
// status write), with its resource and a new v1 object of its type.
func upstreamStrategy(obj runtime.Object, status bool) (s strategydiff.Strategy, resource string, blank runtime.Object) {
	switch obj.(type) {
	case *corev1.Node:
		if status {
			return node.StatusStrategy, "nodes", &corev1.Node{}
		}
		return node.Strategy, "nodes", &corev1.Node{}
	case *nodev1.RuntimeClass:
		return runtimeclass.Strategy, "runtimeclasses", &nodev1.RuntimeClass{}
	case *coordinationv1.Lease:
		return lease.Strategy, "leases", &coordinationv1.Lease{}
	}
	panic(fmt.Sprintf("not a node, runtime class or lease: %T", obj))
}

// mapOrdered: a Node's capacity and allocatable and a RuntimeClass's
// overhead are checked in map order.
func mapOrdered(f string) bool {
	return strings.HasPrefix(f, "status.capacity") || strings.HasPrefix(f, "status.allocatable") ||
		strings.HasPrefix(f, "overhead.limits") // a RuntimeClass's overhead.podFixed
}

type (
	write = strategydiff.Write
	tally = strategydiff.Tally
)

func differFor(obj runtime.Object) strategydiff.Differ {
	group := ""
	switch obj.(type) {
	case *nodev1.RuntimeClass:
		group = nodev1.GroupName
	case *coordinationv1.Lease:
		group = coordinationv1.GroupName
	}
	return strategydiff.Differ{Group: group, Strategy: upstreamStrategy, MapOrdered: mapOrdered, Normalize: normalize}
}

// normalize gives both sides' decoded Node the pod CIDRs upstream's
// conversion to the internal version settles (every Node it serves has
// them; admitd settles them when it decodes, which the generated writes
// always do).
func normalize(upstream, ours runtime.Object) {
	for _, obj := range []runtime.Object{upstream, ours} {
		if n, ok := obj.(*corev1.Node); ok {
			asServed(n)
		}
	}
}

// asServed settles a Node's pod CIDRs as kube-apiserver's round trip
// through the internal version does: the singular podCIDR, when given,
// heads the list (replacing a list it disagrees with), and the list's
// head is the singular field.
func asServed(n *corev1.Node) {
	s := &n.Spec
	if s.PodCIDR != "" && (len(s.PodCIDRs) == 0 || s.PodCIDRs[0] != s.PodCIDR) {
		s.PodCIDRs = []string{s.PodCIDR}
	}
	if len(s.PodCIDRs) > 0 {
		s.PodCIDR = s.PodCIDRs[0]
	}
}

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	differFor(w.Obj).Compare(t, cat, w, c)
}
