package apiserver

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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

// TestStoredServiceOutlivesUndoneCreate: a create through this server
// takes an address (a dry run, or one still to fail); meanwhile another
// server stores a Service with that address and its event arrives; giving
// back the create's allocation must leave the address taken, until the
// stored Service is deleted.
func TestStoredServiceOutlivesUndoneCreate(t *testing.T) {
	store := memory.New()
	srv := newSharingServer(t, store)
	s := srv.s
	res, _ := s.cat.Lookup(corev1.SchemeGroupVersion.WithResource("services"))
	for _, tc := range []struct{ name, ask string }{{"asked for", "10.0.0.30"}, {"allocated", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			probe := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "probe"},
				Spec: corev1.ServiceSpec{ClusterIP: tc.ask, Ports: []corev1.ServicePort{{Port: 80}}}}
			undo, err := s.allocateServiceIPs(res, probe)
			if err != nil {
				t.Fatal(err)
			}
			ip := probe.Spec.ClusterIP
			other := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other-" + tc.name, UID: types.UID("u-" + tc.name)},
				Spec: corev1.ServiceSpec{ClusterIP: ip, ClusterIPs: []string{ip}}}
			s.markTaken(other) // its watch event, while the create is in flight
			undo()
			if err := s.cfg.ServiceIPs.Allocate(net.ParseIP(ip)); !errors.Is(err, serviceip.ErrAllocated) {
				t.Fatalf("after the undone create, allocating %s = %v; want it still taken by the stored Service", ip, err)
			}
			s.releaseAddresses(other) // the stored Service is deleted
			if err := s.cfg.ServiceIPs.Allocate(net.ParseIP(ip)); err != nil {
				t.Fatalf("after the stored Service's delete, allocating %s = %v; want it free", ip, err)
			}
			s.releaseIPs([]string{ip})
		})
	}
}
