package apiserver

import (
	"errors"
	"fmt"
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

// newSharingServer is a server with its own node port allocator over a
// store other servers share (and no cluster IP allocator: a Service keeps
// the address it is created with).
func newSharingServer(t *testing.T, store storage.Store) *testServer {
	t.Helper()
	cfg := testConfig(store, registry.NewCatalogue())
	ports, err := serviceip.NewPorts("30000-30099")
	if err != nil {
		t.Fatal(err)
	}
	cfg.NodePorts = ports
	s := New(cfg)
	if err := s.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &testServer{t: t, s: s}
}

func nodePortBody(name string, port int) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q},"spec":{"type":"NodePort","clusterIP":"10.0.0.%d","ports":[{"port":80,"nodePort":%d}]}}`,
		name, port%200+1, port)
}

// TestFollowNodePorts: a node port taken through one server is taken on
// another that follows the store, and free again there once the Service
// is deleted; a Service deleted and its port taken again through the
// follower itself keeps the port taken when the delete event arrives.
func TestFollowNodePorts(t *testing.T) {
	store := memory.New()
	first, follower := newSharingServer(t, store), newSharingServer(t, store)
	go follower.s.FollowNodePorts(t.Context())
	const services = "/api/v1/namespaces/default/services"
	dryRunCode := func(port int) int {
		return follower.do(http.MethodPost, services+"?dryRun=All", "application/json", nodePortBody("probe", port)).Code
	}

	first.must(http.StatusCreated, http.MethodPost, services, "application/json", nodePortBody("a", 30010))
	waitFor(t, func() bool { return dryRunCode(30010) == http.StatusUnprocessableEntity }, "30010 taken on the follower")
	first.must(http.StatusOK, http.MethodDelete, services+"/a", "", "")
	waitFor(t, func() bool { return dryRunCode(30010) == http.StatusCreated }, "30010 free on the follower")

	follower.must(http.StatusCreated, http.MethodPost, services, "application/json", nodePortBody("b", 30020))
	follower.must(http.StatusOK, http.MethodDelete, services+"/b", "", "")
	follower.must(http.StatusCreated, http.MethodPost, services, "application/json", nodePortBody("c", 30020))
	time.Sleep(100 * time.Millisecond) // the watch delivers b's delete
	if code := dryRunCode(30020); code != http.StatusUnprocessableEntity {
		t.Errorf("create with c's node port 30020 after b's delete event = %d, want 422", code)
	}
}

// TestStoredServiceOutlivesUndoneCreate: a create through this server
// takes a node port (a dry run, or one still to fail); meanwhile another
// server stores a Service with that port and its event arrives; giving
// back the create's allocation must leave the port taken, until the
// stored Service is deleted.
func TestStoredServiceOutlivesUndoneCreate(t *testing.T) {
	store := memory.New()
	s := newSharingServer(t, store).s
	for _, tc := range []struct {
		name string
		ask  int32
	}{{"asked for", 30030}, {"allocated", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			probe := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "probe"},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: tc.ask}}}}
			undo, err := s.allocateNodePorts(probe, map[int]bool{})
			if err != nil {
				t.Fatal(err)
			}
			port := probe.Spec.Ports[0].NodePort
			other := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other-" + tc.name, UID: types.UID("u-" + tc.name)},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: port}}}}
			s.markPortsTaken(other) // its watch event, while the create is in flight
			undo()
			if err := s.cfg.NodePorts.Allocate(int(port)); !errors.Is(err, serviceip.ErrPortAllocated) {
				t.Fatalf("after the undone create, allocating %d = %v; want it still taken by the stored Service", port, err)
			}
			s.releaseNodePorts(other) // the stored Service is deleted
			if err := s.cfg.NodePorts.Allocate(int(port)); err != nil {
				t.Fatalf("after the stored Service's delete, allocating %d = %v; want it free", port, err)
			}
			s.cfg.NodePorts.Release(int(port))
		})
	}
}
