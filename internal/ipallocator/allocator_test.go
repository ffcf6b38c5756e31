package ipallocator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

var (
	catalogue        = registry.NewCatalogue()
	cidrsResource    = mustLookup("networking.k8s.io", "servicecidrs")
	ipsResource      = mustLookup("networking.k8s.io", "ipaddresses")
	servicesResource = mustLookup("", "services")
	quiet            = slog.New(slog.NewTextHandler(io.Discard, nil))
)

func mustLookup(group, resource string) *registry.Resource {
	for _, r := range catalogue.Resources() {
		if r.Group == group && r.Resource == resource {
			return r
		}
	}
	panic(resource)
}

// newAllocator is an allocator over store with caches of its own, as one
// server of several sharing the store has.
func newAllocator(t *testing.T, store storage.Store) *Allocator {
	t.Helper()
	cidrs, ips := admissionsource.NewCache(store, cidrsResource), admissionsource.NewCache(store, ipsResource)
	go cidrs.Run(t.Context(), quiet)
	go ips.Run(t.Context(), quiet)
	a, err := New(Config{Store: store, Catalogue: catalogue, Family: corev1.IPv4Protocol, ServiceCIDRs: cidrs, IPAddresses: ips})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// put stores obj as the API server would.
func put(t *testing.T, store storage.Store, res *registry.Resource, obj runtime.Object) {
	t.Helper()
	m, _ := metaOf(obj)
	data, err := layout.Encode(obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(t.Context(), layout.Key(res, m.GetNamespace(), m.GetName()), data); err != nil {
		t.Fatal(err)
	}
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, errors.New("no metadata")
	}
	return m, nil
}

func serviceCIDR(name string, ready metav1.ConditionStatus, cidrs ...string) *networkingv1.ServiceCIDR {
	sc := &networkingv1.ServiceCIDR{TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "ServiceCIDR"},
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	if ready != "" {
		sc.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: ready}}
	}
	return sc
}

func service(ns, name string, clusterIPs ...string) *corev1.Service {
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if len(clusterIPs) > 0 {
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = clusterIPs[0], clusterIPs
	}
	return svc
}

// stored reads the IPAddress name from storage, nil when there is none.
func stored(t *testing.T, store storage.Store, name string) *networkingv1.IPAddress {
	t.Helper()
	kv, err := store.Get(context.Background(), layout.Key(ipsResource, "", name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	obj, err := layout.Decode(ipsResource, kv)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*networkingv1.IPAddress)
}

// An address asked for is taken by creating its IPAddress, as upstream's:
// labels, the Service as parent and kube-apiserver's managedFields (as
// kube-apiserver 1.37.2 showed them); a second Service asking for it,
// an address outside every ready ServiceCIDR, or one's network or
// broadcast address are refused with upstream's errors.
func TestAllocate(t *testing.T) {
	store := memory.New()
	put(t, store, cidrsResource, serviceCIDR("kubernetes", metav1.ConditionTrue, "10.0.0.0/24"))
	put(t, store, cidrsResource, serviceCIDR("terminating", metav1.ConditionFalse, "10.1.0.0/24"))
	a := newAllocator(t, store)
	ctx := t.Context()
	if err := a.Allocate(ctx, service("default", "web"), net.ParseIP("10.0.0.10")); err != nil {
		t.Fatal(err)
	}
	ip := stored(t, store, "10.0.0.10")
	fields := `{"f:metadata":{"f:labels":{".":{},"f:ipaddress.kubernetes.io/ip-family":{},"f:ipaddress.kubernetes.io/managed-by":{}}},` +
		`"f:spec":{"f:parentRef":{".":{},"f:name":{},"f:namespace":{},"f:resource":{}}}}`
	if ip == nil || ip.Labels[networkingv1.LabelIPAddressFamily] != "IPv4" || ip.Labels[networkingv1.LabelManagedBy] != "ipallocator.k8s.io" ||
		*ip.Spec.ParentRef != (networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}) || ip.UID == "" ||
		len(ip.ManagedFields) != 1 || ip.ManagedFields[0].Manager != "kube-apiserver" || ip.ManagedFields[0].Operation != "Update" ||
		string(ip.ManagedFields[0].FieldsV1.Raw) != fields {
		t.Errorf("stored IPAddress = %+v", ip)
	}
	for _, tc := range []struct {
		ip   string
		want error
	}{
		{"10.0.0.10", ErrAllocated},
		{"10.9.9.9", ErrMismatchedNetwork},
		{"10.0.0.0", ErrMismatchedNetwork},
		{"10.0.0.255", ErrMismatchedNetwork},
		{"10.1.0.5", ErrMismatchedNetwork}, // its ServiceCIDR is not ready
	} {
		if err := a.Allocate(ctx, service("default", "other"), net.ParseIP(tc.ip)); !errors.Is(err, tc.want) {
			t.Errorf("Allocate(%s) = %v, want %v", tc.ip, err, tc.want)
		}
	}
	if err := a.Release(ctx, net.ParseIP("10.0.0.10")); err != nil || stored(t, store, "10.0.0.10") != nil {
		t.Errorf("Release = %v, IPAddress %v; want it deleted", err, stored(t, store, "10.0.0.10"))
	}
	if err := a.Allocate(ctx, service("default", "other"), net.ParseIP("10.0.0.10")); err != nil {
		t.Errorf("Allocate after Release = %v", err)
	}
}

// A dry run checks only that an address asked for is in the range, and
// shows the range's network address for one not asked for, as upstream's.
func TestDryRun(t *testing.T) {
	store := memory.New()
	put(t, store, cidrsResource, serviceCIDR("kubernetes", "", "127.1.0.0/24"))
	a := newAllocator(t, store)
	if err := a.Allocate(t.Context(), service("default", "x"), net.ParseIP("127.1.0.10")); err != nil {
		t.Fatal(err)
	}
	if err := a.CheckDryRun(t.Context(), net.ParseIP("127.1.0.10")); err != nil {
		t.Errorf("CheckDryRun(a taken address) = %v, want nil", err)
	}
	want := "the provided IP (10.9.9.9) is not in the valid range. The range of valid IPs is 127.1.0.0/24"
	if err := a.CheckDryRun(t.Context(), net.ParseIP("10.9.9.9")); err == nil || err.Error() != want {
		t.Errorf("CheckDryRun(out of range) = %v, want %s", err, want)
	}
	if ip, err := a.DryRunNext(t.Context()); err != nil || ip.String() != "127.1.0.0" {
		t.Errorf("DryRunNext = %v, %v; want 127.1.0.0", ip, err)
	}
}

// Dynamic allocation hands out every address of the range once, then
// ErrFull; with two allocators over one store (two servers, each with its
// caches) allocating at once, no address is handed out twice, whatever
// their caches know.
func TestAllocateNextAcrossAllocators(t *testing.T) {
	store := memory.New()
	put(t, store, cidrsResource, serviceCIDR("kubernetes", metav1.ConditionTrue, "10.0.0.0/26")) // 62 addresses
	a, b := newAllocator(t, store), newAllocator(t, store)
	var mu sync.Mutex
	got := map[string]string{}
	var wg sync.WaitGroup
	for w := range 8 {
		alloc := a
		if w%2 == 1 {
			alloc = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				name := fmt.Sprintf("svc-%d-%d", w, i)
				ip, err := alloc.AllocateNext(t.Context(), service("default", name))
				if errors.Is(err, ErrFull) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if prev, ok := got[ip.String()]; ok {
					t.Errorf("%s handed out to %s and %s", ip, prev, name)
				}
				got[ip.String()] = name
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(got) != 62 {
		t.Errorf("%d addresses handed out, want all 62", len(got))
	}
	for ip, name := range got {
		if s := stored(t, store, ip); s == nil || s.Spec.ParentRef.Name != name {
			t.Errorf("IPAddress %s = %+v, want one held by %s", ip, s, name)
		}
	}
}

// Upper part first: while it has room, a dynamic allocation never takes
// one of the first 16 addresses of a /24, which Services that ask for an
// address keep.
func TestAllocateNextPrefersUpperPart(t *testing.T) {
	store := memory.New()
	put(t, store, cidrsResource, serviceCIDR("kubernetes", "", "10.0.0.0/24"))
	a := newAllocator(t, store)
	for i := range 100 {
		ip, err := a.AllocateNext(t.Context(), service("default", fmt.Sprint("s", i)))
		if err != nil {
			t.Fatal(err)
		}
		if ip.To4()[3] <= 16 {
			t.Fatalf("allocation %d took %s, of the lower part", i, ip)
		}
	}
}

// Repair gives a stored Service's cluster IP its missing IPAddress
// (a store written by an older admitd, which allocated in memory), leaves
// a Service's address outside every ServiceCIDR alone, and deletes an
// IPAddress of the allocator whose Service is gone, once it is older than
// a minute.
func TestRepair(t *testing.T) {
	store := memory.New()
	put(t, store, cidrsResource, serviceCIDR("kubernetes", metav1.ConditionTrue, "10.0.0.0/24"))
	put(t, store, servicesResource, service("default", "old", "10.0.0.20"))
	put(t, store, servicesResource, service("default", "outside", "10.9.0.1"))
	now := time.Now()
	a := newAllocator(t, store)
	a.now = func() time.Time { return now }
	for _, name := range []string{"10.0.0.30", "10.0.0.31"} {
		if err := a.Allocate(t.Context(), service("default", "gone-"+name), net.ParseIP(name)); err != nil {
			t.Fatal(err)
		}
	}
	a.now = func() time.Time { return now.Add(30 * time.Second) }
	if err := a.Repair(t.Context(), servicesResource, quiet); err != nil {
		t.Fatal(err)
	}
	if ip := stored(t, store, "10.0.0.20"); ip == nil || ip.Spec.ParentRef.Name != "old" {
		t.Errorf("IPAddress of default/old after repair = %+v, want one held by it", ip)
	}
	if stored(t, store, "10.9.0.1") != nil || stored(t, store, "10.0.0.30") == nil {
		t.Errorf("repair made an IPAddress outside the ServiceCIDRs, or deleted a leaked one younger than a minute")
	}
	a.now = func() time.Time { return now.Add(2 * time.Minute) }
	if err := a.Repair(t.Context(), servicesResource, quiet); err != nil {
		t.Fatal(err)
	}
	if stored(t, store, "10.0.0.30") != nil || stored(t, store, "10.0.0.31") != nil || stored(t, store, "10.0.0.20") == nil {
		t.Errorf("after a minute, repair kept a leaked IPAddress or deleted a held one")
	}
}
