package apiserver

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Invalid networking.k8s.io writes are answered as kube-apiserver 1.37.2
// answered them (422, messages recorded there): an Ingress with an empty
// spec, an IngressClass with bad parameters, a NetworkPolicy with an
// empty ipBlock; and an Ingress status write with a legacy IP is refused
// as upstream's ValidateIngressStatusUpdate refuses it (compared in
// test/upstream/networkingvalidation).
func TestNetworkingWritesAnswerAsUpstream(t *testing.T) {
	ts := newTestServer(t)
	const ingresses = "/apis/networking.k8s.io/v1/namespaces/default/ingresses"
	for _, tc := range []struct {
		method, path, body, want string
	}{
		{"POST", ingresses, `{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"a"},"spec":{}}`,
			"Ingress.networking.k8s.io \"a\" is invalid: spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"},
		{"POST", "/apis/networking.k8s.io/v1/ingressclasses",
			`{"apiVersion":"networking.k8s.io/v1","kind":"IngressClass","metadata":{"name":"c"},"spec":{"controller":"example.com/i","parameters":{"kind":"","name":"","scope":"World"}}}`,
			`IngressClass.networking.k8s.io "c" is invalid: [spec.parameters.scope: Unsupported value: "World": supported values: "Cluster", "Namespace", spec.parameters.kind: Required value, spec.parameters.name: Required value]`},
		{"POST", "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
			`{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"n"},"spec":{"podSelector":{},"ingress":[{"from":[{"ipBlock":{"cidr":""}},{}]}]}}`,
			`NetworkPolicy.networking.k8s.io "n" is invalid: [spec.ingress[0].from[1]: Required value: must specify a peer, spec.ingress[0].from[0].ipBlock.cidr: Required value]`},
	} {
		if got := invalidMessage(t, ts, tc.method, tc.path, tc.body); got != tc.want {
			t.Errorf("%s %s: message\n got %s\nwant %s", tc.method, tc.path, got, tc.want)
		}
	}
	ts.must(201, "POST", ingresses, mediaJSON, `{"metadata":{"name":"b"},"spec":{"defaultBackend":{"service":{"name":"web","port":{"number":80}}}}}`)
	status := `{"metadata":{"name":"b"},"status":{"loadBalancer":{"ingress":[{"ip":"01.2.3.4"}]}}}`
	want := `Ingress.networking.k8s.io "b" is invalid: status.loadBalancer.ingress[0].ip: Invalid value: "01.2.3.4": must not have leading 0s`
	if got := invalidMessage(t, ts, "PUT", ingresses+"/b/status", status); got != want {
		t.Errorf("status write: message\n got %s\nwant %s", got, want)
	}
}

// invalidMessage sends a write that must be refused as invalid and returns
// the message of its Status.
func invalidMessage(t *testing.T, ts *testServer, method, path, body string) string {
	t.Helper()
	w := ts.do(method, path, mediaJSON, body)
	if w.Code != 422 {
		t.Fatalf("%s %s = %d %s, want 422", method, path, w.Code, w.Body.String())
	}
	var st metav1.Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
		t.Fatalf("decoding %s: %v", w.Body.String(), err)
	}
	return st.Message
}
