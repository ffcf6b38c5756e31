package apiserver

import "testing"

// A PUT of a missing RuntimeClass creates it, as upstream's runtimeclass
// strategy allows (AllowCreateOnUpdate); a later PUT must name the
// resourceVersion it replaces.
func TestPutCreatesAMissingRuntimeClass(t *testing.T) {
	ts := newTestServer(t)
	const path = "/apis/node.k8s.io/v1/runtimeclasses/gvisor"
	body := `{"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","metadata":{"name":"gvisor"},"handler":"runsc"}`
	created := ts.must(201, "PUT", path, mediaJSON, body)
	if created.UID == "" {
		t.Fatalf("created RuntimeClass has no uid")
	}
	if w := ts.do("PUT", path, mediaJSON, body); w.Code != 422 {
		t.Errorf("PUT without a resourceVersion over an existing RuntimeClass: %d %s, want 422", w.Code, w.Body)
	}
}

// A PUT of a missing Service creates it, as upstream's service strategy
// allows (internal/server's TestPutCreatesAServiceWithItsAddresses checks
// its cluster IP and node ports); Services update unconditionally.
func TestPutCreatesAMissingService(t *testing.T) {
	ts := newTestServer(t)
	const path = "/api/v1/namespaces/default/services/web"
	body := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"ports":[{"port":80}]}}`
	created := ts.must(201, "PUT", path, mediaJSON, body)
	if created.UID == "" {
		t.Fatalf("created Service has no uid")
	}
	if again := ts.must(200, "PUT", path, mediaJSON, body); again.UID != created.UID {
		t.Errorf("a second PUT replaced the Service (uid %s, was %s)", again.UID, created.UID)
	}
}
