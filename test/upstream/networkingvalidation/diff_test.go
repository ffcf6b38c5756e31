// Package networkingvalidation compares admitd's networking.k8s.io
// strategies (internal/registry: decoding defaults, then the preparation
// and validation of a create, an update or a status write) with
// kube-apiserver's: v1 defaulting (pkg/apis/networking/v1), then the
// strategies of pkg/registry/networking/{servicecidr,ipaddress,ingress,
// ingressclass,networkpolicy} (and the ServiceCIDR and Ingress status
// strategies) through k8s.io/apiserver's rest.ValidateCreate and
// rest.ValidateUpdate, which add the common metadata checks and 1.37's
// declarative validation (IPAddress, IngressClass and NetworkPolicy have
// enforced beta rules), on the internal objects kube-apiserver decodes,
// with every feature gate at its default.
//
// Compared: the defaulted object, the object as prepared for storage, every
// error (type, field, detail, message; in order, but for metadata errors
// on update, compared as sets as upstream checks metadata several times)
// and the warnings of valid writes of the main resource.
package networkingvalidation

import (
	"fmt"
	"os"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	"k8s.io/kubernetes/pkg/registry/networking/ingress"
	"k8s.io/kubernetes/pkg/registry/networking/ingressclass"
	"k8s.io/kubernetes/pkg/registry/networking/ipaddress"
	"k8s.io/kubernetes/pkg/registry/networking/networkpolicy"
	"k8s.io/kubernetes/pkg/registry/networking/servicecidr"

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
	case *networkingv1.ServiceCIDR:
		if status {
			return servicecidr.StatusStrategy, "servicecidrs", &networkingv1.ServiceCIDR{}
		}
		return servicecidr.Strategy, "servicecidrs", &networkingv1.ServiceCIDR{}
	case *networkingv1.IPAddress:
		return ipaddress.Strategy, "ipaddresses", &networkingv1.IPAddress{}
	case *networkingv1.Ingress:
		if status {
			return ingress.StatusStrategy, "ingresses", &networkingv1.Ingress{}
		}
		return ingress.Strategy, "ingresses", &networkingv1.Ingress{}
	case *networkingv1.IngressClass:
		return ingressclass.Strategy, "ingressclasses", &networkingv1.IngressClass{}
	case *networkingv1.NetworkPolicy:
		return networkpolicy.Strategy, "networkpolicies", &networkingv1.NetworkPolicy{}
	}
	panic(fmt.Sprintf("not a networking object: %T", obj))
}

var differ = strategydiff.Differ{Group: networkingv1.GroupName, Strategy: upstreamStrategy}

type (
	write = strategydiff.Write
	tally = strategydiff.Tally
)

func compare(t *testing.T, cat *registry.Catalogue, w write, c *tally) {
	t.Helper()
	differ.Compare(t, cat, w, c)
}
