// Package kindwarnings compares the client warnings admitd gives a create
// or update of the kinds whose kube-apiserver 1.37.2 strategies warn
// (other than Pods, Services' main resource and the pod-template kinds,
// which test/upstream/podwarnings and denyserviceexternalips cover) with
// those of upstream's strategies: WarningsOnCreate, WarningsOnUpdate, and
// the status strategies' WarningsOnUpdate, each after both sides' decoding
// defaults and PrepareForCreate or PrepareForUpdate, in order.
package kindwarnings

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/core/endpoint"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/resourcequota"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/discovery/endpointslice"
	"k8s.io/kubernetes/pkg/registry/networking/ingress"
	"k8s.io/kubernetes/pkg/registry/networking/networkpolicy"
	"k8s.io/kubernetes/pkg/registry/node/runtimeclass"
	"k8s.io/kubernetes/pkg/registry/storage/storageclass"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/test/upstream/internal/quietklog"
	"github.com/admitd/admitd/test/upstream/internal/updiff"
)

func TestMain(m *testing.M) {
	quietklog.Silence()
	os.Exit(m.Run())
}

// kind is one resource (or its status subresource) whose writes warn
// upstream, with a generator of its objects.
type kind struct {
	name string
	gvr  schema.GroupVersionResource
	// sub is "status" for a status subresource, whose writes are updates
	// only; "" for the main resource.
	sub string
	// create is upstream's create strategy (nil for a subresource);
	// update its update strategy.
	create rest.RESTCreateStrategy
	update rest.RESTUpdateStrategy
	gen    func(g gen) runtime.Object
	// mapOrder: upstream gives the warnings in Go's map order, so they are
	// compared sorted.
	mapOrder bool
}

func v1(resource string) schema.GroupVersionResource {
	return corev1.SchemeGroupVersion.WithResource(resource)
}

func admissionKind(name, resource string, s interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}, gen func(g gen) runtime.Object) kind {
	return kind{name: name, gvr: admissionregistrationv1.SchemeGroupVersion.WithResource(resource), create: s, update: s, gen: gen}
}

var kinds = []kind{
	{name: "Endpoints", gvr: v1("endpoints"), create: endpoint.Strategy, update: endpoint.Strategy, gen: gen.endpoints},
	{name: "Node", gvr: v1("nodes"), create: node.Strategy, update: node.Strategy, gen: gen.node},
	{name: "PersistentVolumeClaim", gvr: v1("persistentvolumeclaims"), create: persistentvolumeclaim.Strategy,
		update: persistentvolumeclaim.Strategy, gen: gen.claim},
	{name: "ResourceQuota", gvr: v1("resourcequotas"), create: resourcequota.Strategy, update: resourcequota.Strategy, gen: gen.quota},
	{name: "Secret", gvr: v1("secrets"), create: secret.Strategy, update: secret.Strategy, gen: gen.secret},
	{name: "ServiceAccount", gvr: v1("serviceaccounts"), create: serviceaccount.Strategy, update: serviceaccount.Strategy,
		gen: gen.serviceAccount},
	{name: "pods/status", gvr: v1("pods"), sub: "status", update: pod.StatusStrategy, gen: gen.pod},
	{name: "services/status", gvr: v1("services"), sub: "status", update: service.StatusStrategy, gen: gen.service},
	{name: "EndpointSlice", gvr: discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), create: endpointslice.Strategy,
		update: endpointslice.Strategy, gen: gen.endpointSlice},
	{name: "Ingress", gvr: networkingv1.SchemeGroupVersion.WithResource("ingresses"), create: ingress.Strategy, update: ingress.Strategy,
		gen: gen.ingress},
	{name: "ingresses/status", gvr: networkingv1.SchemeGroupVersion.WithResource("ingresses"), sub: "status",
		update: ingress.StatusStrategy, gen: gen.ingress},
	{name: "NetworkPolicy", gvr: networkingv1.SchemeGroupVersion.WithResource("networkpolicies"), create: networkpolicy.Strategy,
		update: networkpolicy.Strategy, gen: gen.networkPolicy},
	{name: "RuntimeClass", gvr: nodev1.SchemeGroupVersion.WithResource("runtimeclasses"), create: runtimeclass.Strategy,
		update: runtimeclass.Strategy, gen: gen.runtimeClass, mapOrder: true},
	{name: "StorageClass", gvr: storagev1.SchemeGroupVersion.WithResource("storageclasses"), create: storageclass.Strategy,
		update: storageclass.Strategy, gen: gen.storageClass},
	admissionKind("ValidatingWebhookConfiguration", "validatingwebhookconfigurations", validatingwebhookconfiguration.Strategy, gen.validatingWebhooks),
	admissionKind("MutatingWebhookConfiguration", "mutatingwebhookconfigurations", mutatingwebhookconfiguration.Strategy, gen.mutatingWebhooks),
	admissionKind("ValidatingAdmissionPolicy", "validatingadmissionpolicies", validatingadmissionpolicy.NewStrategy(nil, nil), gen.validatingPolicy),
	admissionKind("ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", validatingadmissionpolicybinding.NewStrategy(nil, nil, nil),
		gen.validatingBinding),
	admissionKind("MutatingAdmissionPolicy", "mutatingadmissionpolicies", mutatingadmissionpolicy.NewStrategy(nil, nil), gen.mutatingPolicy),
	admissionKind("MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings", mutatingadmissionpolicybinding.NewStrategy(nil, nil, nil),
		gen.mutatingBinding),
}

// comparer runs writes through both sides and counts what it saw.
type comparer struct {
	t   *testing.T
	cat *registry.Catalogue
	// compared and warned count the writes compared and those that warned,
	// per kind name.
	compared, warned map[string]int
	distinct         map[string]bool
}

func newComparer(t *testing.T) *comparer {
	return &comparer{t: t, cat: registry.NewCatalogue(), compared: map[string]int{}, warned: map[string]int{},
		distinct: map[string]bool{}}
}

// lintWarning is a finding of admitd's own pkg/lint, which admitd adds
// after upstream's warnings on admission configurations.
var lintWarning = regexp.MustCompile(`^AL\d{3} \(`)

// compare creates obj (old nil) or updates old into obj through both
// sides, each after its defaults and preparation, and reports a
// difference in the warnings. It returns upstream's.
func (c *comparer) compare(k kind, obj, old runtime.Object) []string {
	c.t.Helper()
	res, ok := c.cat.Lookup(k.gvr)
	if !ok {
		c.t.Fatalf("%s not served", k.gvr)
	}
	obj = obj.DeepCopyObject()
	res.Default(obj)
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	up := updiff.ToInternal(c.t, obj)
	var want, got []string
	if old == nil {
		k.create.PrepareForCreate(ctx, up)
		want = k.create.WarningsOnCreate(ctx, up)
		registry.PrepareForCreate(res, obj)
		got = res.Warnings(obj, nil)
	} else {
		old = old.DeepCopyObject()
		res.Default(old)
		upOld := updiff.ToInternal(c.t, old)
		k.update.PrepareForUpdate(ctx, up, upOld)
		want = k.update.WarningsOnUpdate(ctx, up, upOld)
		// the server keeps the stored generation before preparing
		accessor(c.t, obj).SetGeneration(accessor(c.t, old).GetGeneration())
		obj = registry.PrepareForUpdate(res, k.sub, obj, old)
		got = res.UpdateWarnings(k.sub, obj, old)
	}
	got = slices.DeleteFunc(got, lintWarning.MatchString)
	if k.mapOrder {
		slices.Sort(want)
		slices.Sort(got)
	}
	c.compared[k.name]++
	if len(want) > 0 {
		c.warned[k.name]++
	}
	for _, w := range want {
		c.distinct[indexless(w)] = true
	}
	if !slices.Equal(got, want) {
		label := "create"
		if old != nil {
			label = "update"
		}
		c.t.Errorf("%s %s: warnings\n  %q\nupstream\n  %q\nobject: %+v\nold: %+v", k.name, label, got, want, obj, old)
	}
	return want
}

func accessor(t *testing.T, obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// indexless is a warning without its numbers, to count kinds of warnings.
func indexless(w string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, w)
}
