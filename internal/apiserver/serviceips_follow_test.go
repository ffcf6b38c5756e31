package apiserver

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/serviceip"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// newSharingServer is a server with its own cluster IP allocator over a
// store other servers share.
func newSharingServer(t *testing.T, store storage.Store) *testServer {
	t.Helper()
	cfg := testConfig(store, registry.NewCatalogue())
	ips, err := serviceip.New("10.0.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServiceIPs = ips
	s := New(cfg)
	if err := s.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &testServer{t: t, s: s}
}

func serviceBody(name, ip string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q},"spec":{"clusterIP":%q,"ports":[{"port":80}]}}`, name, ip)
}

// TestFollowServiceIPs: an address taken through one server is taken on
// another that follows the store, and free again there once the Service is
// deleted; a Service deleted and its address taken again through the
// follower itself keeps the address taken when the delete event arrives.
func TestFollowServiceIPs(t *testing.T) {
	store := memory.New()
	first, follower := newSharingServer(t, store), newSharingServer(t, store)
	go follower.s.FollowServiceIPs(t.Context())
	const services = "/api/v1/namespaces/default/services"
	dryRunCode := func(ip string) int {
		return follower.do(http.MethodPost, services+"?dryRun=All", "application/json", serviceBody("probe", ip)).Code
	}

	first.must(http.StatusCreated, http.MethodPost, services, "application/json", serviceBody("a", "10.0.0.10"))
	waitFor(t, func() bool { return dryRunCode("10.0.0.10") == http.StatusUnprocessableEntity }, "10.0.0.10 taken on the follower")
	first.must(http.StatusOK, http.MethodDelete, services+"/a", "", "")
	waitFor(t, func() bool { return dryRunCode("10.0.0.10") == http.StatusCreated }, "10.0.0.10 free on the follower")

	follower.must(http.StatusCreated, http.MethodPost, services, "application/json", serviceBody("b", "10.0.0.20"))
	follower.must(http.StatusOK, http.MethodDelete, services+"/b", "", "")
	follower.must(http.StatusCreated, http.MethodPost, services, "application/json", serviceBody("c", "10.0.0.20"))
	time.Sleep(100 * time.Millisecond) // the watch delivers b's delete
	if code := dryRunCode("10.0.0.20"); code != http.StatusUnprocessableEntity {
		t.Errorf("create with c's address 10.0.0.20 after b's delete event = %d, want 422", code)
	}
}
