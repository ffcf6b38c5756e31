package aggregator

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"
)

// TestCheck: the Available condition of each case, with the reasons and
// messages kube-apiserver 1.37.2 wrote for the same situations (recorded
// with k8s.io/sample-apiserver behind it).
func TestCheck(t *testing.T) {
	proxyCA, cert := newProxyIdentity(t)
	var as atomic.Value
	var status atomic.Int32
	status.Store(http.StatusOK)
	b := newBackend(t, proxyCA, func(w http.ResponseWriter, r *http.Request) {
		as.Store(r.Header.Get("X-Remote-User") + " in " + r.Header.Get("X-Remote-Group"))
		w.WriteHeader(int(status.Load()))
	})
	st := newStored()
	s := wardle(t, st, b, false)
	a := New(Options{APIServices: st, Services: st, ProxyClientCert: cert})
	url := fmt.Sprintf("https://127.0.0.1:%d/apis/wardle.example.com/v1alpha1", b.port(t))
	check := func(name, wantStatus, wantReason, wantMessage string) {
		t.Helper()
		c := a.Check(context.Background(), s)
		if string(c.Status) != wantStatus || c.Reason != wantReason || c.Message != wantMessage || c.Type != apiregistrationv1.Available {
			t.Errorf("%s: Check = %s %s %q, want %s %s %q", name, c.Status, c.Reason, c.Message, wantStatus, wantReason, wantMessage)
		}
	}
	check("serving", "True", "Passed", "all checks passed")
	if got := as.Load(); got != "system:kube-aggregator in system:masters" {
		t.Errorf("discovery check as %v, want system:kube-aggregator in system:masters", got)
	}
	status.Store(http.StatusForbidden)
	check("refusing", "False", "FailedDiscoveryCheck", fmt.Sprintf("failing or missing response from %s: bad status from %s: 403", url, url))

	st.update(func() { st.slices["wardle/api"][0].Endpoints[0].Conditions.Ready = ptr.To(false) })
	check("no ready endpoint", "False", "MissingEndpoints", `endpointslices for service/api in "wardle" have no addresses with port name ""`)
	st.update(func() { st.slices["wardle/api"] = nil })
	check("no slices", "False", "EndpointsNotFound", `cannot find endpointslices for service/api in "wardle"`)
	st.update(func() { st.services["wardle/api"].Spec.Ports[0].Port = 1 })
	check("wrong port", "False", "ServicePortError", fmt.Sprintf(`service/api in "wardle" is not listening on port %d`, *s.Spec.Service.Port))
	st.update(func() {
		st.services["wardle/api"] = &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "127.0.0.1"}}
	})
	status.Store(http.StatusOK)
	check("external name, no slices needed", "True", "Passed", "all checks passed")
	st.update(func() { delete(st.services, "wardle/api") })
	check("no service", "False", "ServiceNotFound", `service/api in "wardle" is not present`)

	wardle(t, st, b, false)
	b.srv.Close()
	check("server gone", "False", "FailedDiscoveryCheck", fmt.Sprintf("failing or missing response from %s: Get %q: dial tcp %s: connect: connection refused",
		url, url, b.srv.Listener.Addr()))
}

// TestResolve: the cluster IP by default, a ready endpoint of the service
// port's name with endpoint routing, --service-map first, and
// default/kubernetes:443 to the server itself.
func TestResolve(t *testing.T) {
	st := newStored()
	st.services["ns/svc"] = &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.7",
		Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}
	st.slices["ns/svc"] = []*discoveryv1.EndpointSlice{{AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}, {Addresses: []string{"10.1.0.2"}}},
		Ports:     []discoveryv1.EndpointPort{{Name: ptr.To("other"), Port: ptr.To[int32](1)}, {Name: ptr.To("https"), Port: ptr.To[int32](8443)}}}}
	ref := &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "svc", Port: ptr.To[int32](443)}
	for _, tc := range []struct {
		name string
		o    Options
		ref  *apiregistrationv1.ServiceReference
		want string
	}{
		{"cluster IP", Options{}, ref, "10.0.0.7:443"},
		{"endpoints", Options{EndpointRouting: true}, ref, "10.1.0.2:8443"},
		{"service map", Options{MapService: func(h string) (string, bool) { return "127.0.0.1:9", h == "svc.ns.svc" }}, ref, "127.0.0.1:9"},
		{"kubernetes", Options{Self: func() string { return "127.0.0.1:6443" }}, &apiregistrationv1.ServiceReference{Namespace: "default", Name: "kubernetes", Port: ptr.To[int32](443)}, "127.0.0.1:6443"},
	} {
		tc.o.APIServices, tc.o.Services = st, st
		got, err := New(tc.o).resolve(context.Background(), tc.ref)
		if err != nil || got != tc.want {
			t.Errorf("%s: resolve = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	_, err := New(Options{Services: st}).resolve(context.Background(), &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "svc", Port: ptr.To[int32](80)})
	if err == nil || err.Error() != `no service port 80 found for service "svc"` {
		t.Errorf("resolve(port 80) = %v, want upstream's no service port error", err)
	}
}
