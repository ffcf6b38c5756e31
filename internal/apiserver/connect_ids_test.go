package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Connect, proxy names, update names and ComponentStatus answer as
// kube-apiserver 1.37.2 (recorded side by side over every route): a
// connect with dryRun is refused first; a proxy's name is
// [scheme:]name[:port]; a Service is proxied by its EndpointSlices, read
// only when the port is a number; an update's body must name the object
// before anything is read.
func TestConnectAndUpdateNames(t *testing.T) {
	ts := newTestServer(t)
	const ns = "/api/v1/namespaces/default"
	for _, c := range []struct {
		method, path, body string
		code               int
		message            string
	}{
		{http.MethodGet, ns + "/pods/p/exec?dryRun=All&command=ls", "", 400, "dryRun is not supported"},
		{http.MethodPost, ns + "/services/s/proxy?dryRun=All", "", 400, "dryRun is not supported"},
		{http.MethodGet, ns + "/pods/p:80/proxy", "", 404, `pods "p" not found`},
		{http.MethodGet, ns + "/pods/https:p:443/proxy/x", "", 404, `pods "p" not found`},
		{http.MethodGet, ns + "/pods/a:b:c:d/proxy", "", 400, `invalid pod request "a:b:c:d"`},
		{http.MethodGet, "/api/v1/nodes/n:10250/proxy", "", 404, `nodes "n" not found`},
		{http.MethodGet, ns + "/services/s/proxy", "", 503, `no endpoints available for service "s"`},
		{http.MethodGet, ns + "/services/s:http/proxy/x", "", 503, `no endpoints available for service "s"`},
		{http.MethodGet, ns + "/services/s:80/proxy", "", 404, `services "s" not found`},
		{http.MethodGet, "/api/v1/componentstatuses/x", "", 404, `componentstatus "x" not found`},
		{http.MethodPut, ns + "/configmaps/c", "{}", 400, "the name of the object (c based on URL) was undeterminable: name must be provided"},
		{http.MethodPut, ns + "/configmaps/c", `{"metadata":{"name":"d"}}`, 400, "the name of the object (d) does not match the name on the URL (c)"},
		{http.MethodPut, "/apis/apps/v1/namespaces/default/deployments/d/scale", "{}", 400, "the name of the object (d based on URL) was undeterminable: name must be provided"},
	} {
		w := ts.do(c.method, c.path, mediaJSON, c.body)
		var st metav1.Status
		if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || w.Code != c.code || st.Message != c.message {
			t.Errorf("%s %s = %d %q, want %d %q", c.method, c.path, w.Code, st.Message, c.code, c.message)
		}
	}
}

// A Service's proxy reaches a ready endpoint of its EndpointSlices that
// is an existing pod of the namespace, of the port asked for.
func TestServiceProxyFindsEndpointSlicePods(t *testing.T) {
	ts := newTestServer(t)
	const ns = "/api/v1/namespaces/default"
	ts.must(201, "POST", ns+"/pods", mediaJSON, `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	ts.must(201, "POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", mediaJSON, `{"metadata":{"name":"s-1","labels":{"kubernetes.io/service-name":"s"}},
		"addressType":"IPv4","ports":[{"name":"","port":80},{"name":"web","port":8080}],
		"endpoints":[{"addresses":["10.1.2.4"],"conditions":{"ready":false},"targetRef":{"kind":"Pod","namespace":"default","name":"p"}},
			{"addresses":["10.1.2.5"],"targetRef":{"kind":"Pod","namespace":"default","name":"gone"}},
			{"addresses":["10.1.2.3"],"targetRef":{"kind":"Pod","namespace":"default","name":"p"}}]}`)
	for _, c := range []struct{ path, message string }{
		{ns + "/services/s/proxy", "error trying to reach service: admitd does not proxy to endpoint 10.1.2.3"},
		{ns + "/services/s:web/proxy/x", "error trying to reach service: admitd does not proxy to endpoint 10.1.2.3"},
		{ns + "/services/s:other/proxy", `no endpoints available for service "s"`},
	} {
		w := ts.do(http.MethodGet, c.path, "", "")
		var st metav1.Status
		if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || w.Code != 503 || st.Message != c.message {
			t.Errorf("GET %s = %d %q, want 503 %q", c.path, w.Code, st.Message, c.message)
		}
	}
}
