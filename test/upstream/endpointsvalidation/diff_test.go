// Package endpointsvalidation compares admitd's strategies of Endpoints,
// EndpointSlices and ServiceAccounts (internal/registry: decoding
// defaults, then the preparation and validation of a create or an update,
// and the warnings of a valid write) with kube-apiserver's: v1 defaulting,
// then the strategies of pkg/registry/core/endpoint,
// pkg/registry/discovery/endpointslice and pkg/registry/core/serviceaccount
// through k8s.io/apiserver's rest.ValidateCreate and rest.ValidateUpdate,
// which add the common metadata checks and 1.37's declarative validation
// (EndpointSlices have enforced beta rules on addressType and each
// endpoint's addresses), on the internal objects kube-apiserver decodes,
// every feature gate at its default.
//
// Compared: the defaulted object, the object as prepared for storage, every
// error (type, field, detail, message; in order, but for metadata errors
// on update, compared as sets as upstream checks metadata several times)
// and the warnings of valid writes.
package endpointsvalidation

import (
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	"k8s.io/kubernetes/pkg/registry/core/endpoint"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/discovery/endpointslice"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/strategydiff"
)

func TestMain(m *testing.M) {
	// Declarative validation logs, as errors, every mismatch it finds
	// between its errors and the handwritten ones.
	quietklog.SilenceErrors()
	os.Exit(m.Run())
}

// upstreamStrategy is the strategy of obj's kind, with its resource and a
// new v1 object of its type.
func upstreamStrategy(obj runtime.Object, _ bool) (s strategydiff.Strategy, resource string, blank runtime.Object) {
	switch obj.(type) {
	case *corev1.Endpoints:
		return endpoint.Strategy, "endpoints", &corev1.Endpoints{}
	case *corev1.ServiceAccount:
		return serviceaccount.Strategy, "serviceaccounts", &corev1.ServiceAccount{}
	case *discoveryv1.EndpointSlice:
		return endpointslice.Strategy, "endpointslices", &discoveryv1.EndpointSlice{}
	}
	panic(fmt.Sprintf("not an endpoints object: %T", obj))
}

var (
	coreDiffer      = strategydiff.Differ{Group: "", Strategy: upstreamStrategy}
	discoveryDiffer = strategydiff.Differ{Group: discoveryv1.GroupName, Strategy: upstreamStrategy}
)

type (
	write = strategydiff.Write
	tally = strategydiff.Tally
)

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	if _, ok := w.Obj.(*discoveryv1.EndpointSlice); ok {
		discoveryDiffer.Compare(t, cat, w, c)
		return
	}
	coreDiffer.Compare(t, cat, w, c)
}
