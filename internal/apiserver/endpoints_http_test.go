package apiserver

import "testing"

// Endpoints over HTTP, as kube-apiserver 1.37.2 answers: a PUT of missing
// Endpoints creates them (upstream's strategy allows create on update), a
// loopback address is refused with 422, and an update that keeps stored
// subsets which no longer pass is accepted.
func TestEndpointsHTTP(t *testing.T) {
	ts := newTestServer(t)
	const (
		path       = "/api/v1/namespaces/default/endpoints"
		deprecated = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
	)
	body := func(ip string) string {
		return `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"web"},"subsets":[{"addresses":[{"ip":"` + ip + `"}],"ports":[{"port":80}]}]}`
	}
	checkAnswer(t, "PUT missing", ts.do("PUT", path+"/web", "", body("10.1.2.3")), 201, 201, "", deprecated)
	checkAnswer(t, "PUT loopback", ts.do("PUT", path+"/web", "", body("127.0.0.1")), 200, 422,
		`Endpoints "web" is invalid: subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`, deprecated)
	checkAnswer(t, "POST loopback", ts.do("POST", path, "", `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"lo"},"subsets":[{"addresses":[{"ip":"::1"}]}]}`), 201, 422,
		`Endpoints "lo" is invalid: subsets[0].addresses[0].ip: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)`, deprecated)
	checkAnswer(t, "PATCH labels only", ts.do("PATCH", path+"/web", "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`), 200, 200, "", deprecated)
}
