package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// startWithRange starts a whole admitd on dir (bolt) allocating from cidr.
func startWithRange(t *testing.T, dir, cidr string) (*Server, kubernetes.Interface) {
	t.Helper()
	return startWithRangeAndControllers(t, dir, cidr, nil)
}

// startWithRangeAndControllers is startWithRange with --controllers.
func startWithRangeAndControllers(t *testing.T, dir, cidr string, controllers []string) (*Server, kubernetes.Interface) {
	t.Helper()
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.KubeconfigOut, o.ServiceClusterIPRange, o.Controllers = dir, 0, "-", cidr, controllers
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: s.URL, QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM, CertData: s.AdminCertPEM, KeyData: s.AdminKeyPEM}})
	return s, cs
}

func createService(cs kubernetes.Interface, name, clusterIP string) (*corev1.Service, error) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{ClusterIP: clusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}
	return cs.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{})
}

func wantServiceError(t *testing.T, cs kubernetes.Interface, name, ip string, code int32, msg string) {
	t.Helper()
	_, err := createService(cs, name, ip)
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Code != code || !strings.Contains(st.Status().Message, msg) {
		t.Fatalf("create Service %s with clusterIP %q = %v, want %d containing %q", name, ip, err, code, msg)
	}
}

// waitForKubernetesService waits until the kubernetes Service holds its
// address (its controller runs beside the server).
func waitForKubernetesService(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := cs.NetworkingV1().IPAddresses().Get(context.Background(), "127.1.0.1", metav1.GetOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the kubernetes Service's IPAddress 127.1.0.1: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Cluster IPs are IPAddress objects (errors as kube-apiserver 1.37.2
// printed them): an address taken is refused, one outside the ServiceCIDRs
// too; the objects outlive a restart; a full range is a 500.
func TestServiceClusterIPAllocation(t *testing.T) {
	dir := t.TempDir()
	s, cs := startWithRange(t, dir, "127.1.0.0/29") // .1 the kubernetes Service's, .2-.6 free
	waitForKubernetesService(t, cs)
	a, err := createService(cs, "a", "")
	if err != nil {
		t.Fatal(err)
	}
	_, ipnet, _ := net.ParseCIDR("127.1.0.0/29")
	if ip := net.ParseIP(a.Spec.ClusterIP); ip == nil || !ipnet.Contains(ip) || a.Spec.ClusterIP == "127.1.0.1" ||
		len(a.Spec.ClusterIPs) != 1 || a.Spec.ClusterIPs[0] != a.Spec.ClusterIP {
		t.Fatalf("allocated clusterIP %q, clusterIPs %v; want one free address of the range", a.Spec.ClusterIP, a.Spec.ClusterIPs)
	}
	if len(a.Spec.IPFamilies) != 1 || a.Spec.IPFamilies[0] != corev1.IPv4Protocol || *a.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		t.Errorf("ipFamilies %v, ipFamilyPolicy %v; want [IPv4], SingleStack", a.Spec.IPFamilies, *a.Spec.IPFamilyPolicy)
	}
	ip, err := cs.NetworkingV1().IPAddresses().Get(context.Background(), a.Spec.ClusterIP, metav1.GetOptions{})
	if err != nil || *ip.Spec.ParentRef != (networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "a"}) {
		t.Fatalf("IPAddress of a's address: %v, %+v; want one with a as its parent", err, ip)
	}
	wantServiceError(t, cs, "b", a.Spec.ClusterIP, 422, "spec.clusterIPs: Invalid value: [\""+a.Spec.ClusterIP+"\"]: failed to allocate IP "+a.Spec.ClusterIP+": provided IP is already allocated")
	wantServiceError(t, cs, "b", "127.1.0.1", 422, "provided IP is already allocated")
	wantServiceError(t, cs, "b", "10.0.0.9", 422, "failed to allocate IP 10.0.0.9: the provided network does not match the current range")
	wantServiceError(t, cs, "b", "127.1.0.7", 422, "failed to allocate IP 127.1.0.7: the provided network does not match the current range") // the broadcast address
	wantServiceError(t, cs, "b", "fd00::1", 422, `spec.clusterIPs[0]: Invalid value: ["fd00::1"]: IPv6 is not configured on this cluster`)
	if h, err := createService(cs, "headless", corev1.ClusterIPNone); err != nil || h.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Fatalf("headless Service: %v, clusterIP %q; want None", err, h.Spec.ClusterIP)
	}
	if err := cs.CoreV1().Services("default").Delete(context.Background(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NetworkingV1().IPAddresses().Get(context.Background(), a.Spec.ClusterIP, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("IPAddress of a deleted Service's address: %v, want it gone", err)
	}
	if _, err := createService(cs, "b", a.Spec.ClusterIP); err != nil {
		t.Fatalf("reusing the address of a deleted Service: %v", err)
	}
	_ = s.Close()

	s, cs = startWithRange(t, dir, "127.1.0.0/29")
	defer func() { _ = s.Close() }()
	wantServiceError(t, cs, "c", a.Spec.ClusterIP, 422, "provided IP is already allocated") // b's, after a restart
	for i := range 4 {
		if _, err := createService(cs, "fill-"+string(rune('a'+i)), ""); err != nil {
			t.Fatalf("filling the range: %v", err)
		}
	}
	wantServiceError(t, cs, "full", "", 500, `failed to allocate a serviceIP for Service "full": range is full`)
}

// A dry run takes no address: one asked for is only checked against the
// range (a taken one passes), and one not asked for shows the range's
// network address, as kube-apiserver 1.37.2 answered.
func TestServiceClusterIPDryRun(t *testing.T) {
	s, cs := startWithRange(t, t.TempDir(), "127.1.0.0/24")
	defer func() { _ = s.Close() }()
	waitForKubernetesService(t, cs)
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	create := func(name, ip string) (*corev1.Service, error) {
		return cs.CoreV1().Services("default").Create(context.Background(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{{Port: 80}}}}, dryRun)
	}
	if svc, err := create("any", ""); err != nil || svc.Spec.ClusterIP != "127.1.0.0" {
		t.Errorf("dry run without an address = %v, clusterIP %v; want 127.1.0.0", err, svc.Spec.ClusterIP)
	}
	if _, err := create("taken", "127.1.0.1"); err != nil {
		t.Errorf("dry run with a taken address = %v, want accepted", err)
	}
	_, err := create("outside", "10.9.9.9")
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.clusterIPs: Invalid value: ["10.9.9.9"]: failed to allocate IP 10.9.9.9: `+
		"the provided IP (10.9.9.9) is not in the valid range. The range of valid IPs is 127.1.0.0/24") {
		t.Errorf("dry run outside the range = %v", err)
	}
	list, err := cs.NetworkingV1().IPAddresses().List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("IPAddresses after dry runs: %v, %d; want the kubernetes Service's only", err, len(list.Items))
	}
}

// The default ServiceCIDR is kube-apiserver's: "kubernetes" with the range,
// created as kube-apiserver and made Ready by
// kubernetes-service-cidr-controller (as kube-apiserver 1.37.2 showed it,
// without kube-controller-manager, whose service-cidr-controller is off
// here: TestServiceCIDRControllerKeepsTheDefault has it on), and /readyz
// names its post-start hook and the IP repair's.
func TestDefaultServiceCIDR(t *testing.T) {
	s, cs := startWithRangeAndControllers(t, t.TempDir(), "127.1.0.5/24", []string{"*", "-service-cidr-controller"})
	defer func() { _ = s.Close() }()
	sc, err := cs.NetworkingV1().ServiceCIDRs().Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, m := range sc.ManagedFields {
		managers = append(managers, m.Manager+"/"+string(m.Operation)+"/"+m.Subresource)
	}
	ready := sc.Status.Conditions
	if len(sc.Spec.CIDRs) != 1 || sc.Spec.CIDRs[0] != "127.1.0.0/24" || len(ready) != 1 || ready[0].Type != "Ready" || ready[0].Status != "True" ||
		ready[0].Message != "Kubernetes default Service CIDR is ready" || ready[0].Reason != "" ||
		!slices.Equal(managers, []string{"kubernetes-service-cidr-controller/Apply/status", "kube-apiserver/Update/"}) {
		t.Errorf("default ServiceCIDR = %+v, managers %q", sc, managers)
	}
	for _, path := range []string{"/readyz/poststarthook/start-kubernetes-service-cidr-controller", "/readyz/poststarthook/start-service-ip-repair-controllers"} {
		if code, body := getHealth(t, s, path); code != 200 || body != "ok" {
			t.Errorf("GET %s = %d %q, want 200 ok", path, code, body)
		}
	}
}

// A store a former admitd wrote, which allocated cluster IPs in memory,
// holds Services without IPAddresses: the repair at start gives them
// theirs, so their addresses are not handed out again.
func TestRepairGivesStoredServicesTheirIPAddresses(t *testing.T) {
	dir := t.TempDir()
	s, cs := startWithRange(t, dir, "127.1.0.0/24")
	waitForKubernetesService(t, cs)
	if _, err := createService(cs, "old", "127.1.0.40"); err != nil {
		t.Fatal(err)
	}
	if err := cs.NetworkingV1().IPAddresses().Delete(context.Background(), "127.1.0.40", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err) // as an older admitd left it
	}
	_ = s.Close()
	s, cs = startWithRange(t, dir, "127.1.0.0/24")
	defer func() { _ = s.Close() }()
	ip, err := cs.NetworkingV1().IPAddresses().Get(context.Background(), "127.1.0.40", metav1.GetOptions{})
	if err != nil || ip.Spec.ParentRef.Name != "old" {
		t.Fatalf("IPAddress of old's address after a restart: %v, %+v; want it repaired", err, ip)
	}
	wantServiceError(t, cs, "new", "127.1.0.40", 422, "provided IP is already allocated")
}

func TestServiceTypeChangeAllocatesAndReleases(t *testing.T) {
	s, cs := startWithRange(t, t.TempDir(), "127.1.0.0/30") // .1 the kubernetes Service's, .2 free
	defer func() { _ = s.Close() }()
	waitForKubernetesService(t, cs)
	ctx, svcs := context.Background(), cs.CoreV1().Services("default")
	ext, err := svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ext.Spec.Type, ext.Spec.ExternalName, ext.Spec.Ports = corev1.ServiceTypeClusterIP, "", []corev1.ServicePort{{Port: 80}}
	if ext, err = svcs.Update(ctx, ext, metav1.UpdateOptions{}); err != nil || ext.Spec.ClusterIP != "127.1.0.2" {
		t.Fatalf("ExternalName -> ClusterIP: %v, clusterIP %q; want 127.1.0.2", err, ext.Spec.ClusterIP)
	}
	wantServiceError(t, cs, "other", "", 500, "range is full")
	ext.Spec.Type, ext.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
	if _, err = svcs.Update(ctx, ext, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("ClusterIP -> ExternalName: %v", err)
	}
	if other, err := createService(cs, "other", ""); err != nil || other.Spec.ClusterIP != "127.1.0.2" {
		t.Fatalf("after the release: %v, clusterIP %q; want 127.1.0.2", err, other.Spec.ClusterIP)
	}
}

func TestServiceNodePortAllocation(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.KubeconfigOut, o.Storage, o.ServiceNodePortRange = t.TempDir(), 0, "-", "memory", "30000-30002"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: s.URL, QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM, CertData: s.AdminCertPEM, KeyData: s.AdminKeyPEM}})
	ctx, svcs := context.Background(), cs.CoreV1().Services("default")
	nodePort := func(name string, ports ...corev1.ServicePort) (*corev1.Service, error) {
		return svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: ports}}, metav1.CreateOptions{})
	}
	// Ports are allocated in order, as upstream: the requested 30001 first,
	// then one free port shared by 53/TCP and 53/UDP.
	a, err := nodePort("a", corev1.ServicePort{Name: "web", Port: 80, NodePort: 30001},
		corev1.ServicePort{Name: "tcp", Port: 53}, corev1.ServicePort{Name: "udp", Port: 53, Protocol: corev1.ProtocolUDP})
	if err != nil {
		t.Fatal(err)
	}
	p := a.Spec.Ports
	if p[0].NodePort != 30001 || p[1].NodePort < 30000 || p[1].NodePort > 30002 || p[1].NodePort == 30001 || p[2].NodePort != p[1].NodePort {
		t.Fatalf("node ports %d %d %d; want 30001, and one other shared port of the range for 53/TCP and 53/UDP", p[0].NodePort, p[1].NodePort, p[2].NodePort)
	}
	_, err = nodePort("b", corev1.ServicePort{Port: 80, NodePort: 30001})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated") {
		t.Fatalf("taken node port: %v", err)
	}
	_, err = nodePort("b", corev1.ServicePort{Port: 80, NodePort: 31000})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided port is not in the valid range. The range of valid ports is 30000-30002") {
		t.Fatalf("node port out of range: %v", err)
	}
	if _, err := nodePort("b", corev1.ServicePort{Port: 80}); err != nil {
		t.Fatalf("the last free node port: %v", err)
	}
	_, err = nodePort("c", corev1.ServicePort{Port: 80})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "failed to allocate a nodePort: range is full") {
		t.Fatalf("full node port range: %v", err)
	}
	a.Spec.Type, a.Spec.Ports, a.Spec.ExternalTrafficPolicy = corev1.ServiceTypeClusterIP, []corev1.ServicePort{{Port: 80}}, ""
	if _, err := svcs.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("NodePort -> ClusterIP: %v", err)
	}
	if _, err := nodePort("c", corev1.ServicePort{Port: 80, NodePort: 30001}); err != nil {
		t.Fatalf("a node port released by a type change: %v", err)
	}
}

// A port requested after one the same Service was just given is refused as
// taken (upstream allocates in order), not let through to a duplicate.
func TestServiceNodePortTakenEarlierInTheSameService(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.KubeconfigOut, o.Storage, o.ServiceNodePortRange = t.TempDir(), 0, "-", "memory", "30000-30000"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: s.URL, QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM, CertData: s.AdminCertPEM, KeyData: s.AdminKeyPEM}})
	_, err = cs.CoreV1().Services("default").Create(context.Background(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Name: "dns", Port: 53}, {Name: "web", Port: 80, NodePort: 30000}}}},
		metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.ports[1].nodePort: Invalid value: 30000: provided port is already allocated") {
		t.Fatalf("create = %v, want 422 provided port is already allocated on spec.ports[1].nodePort", err)
	}
}

// A PUT of a missing Service creates it as a POST would: its cluster IP
// (with its IPAddress) and node port are allocated.
func TestPutCreatesAServiceWithItsAddresses(t *testing.T) {
	_, cs := startWithRange(t, t.TempDir(), "127.1.0.0/29")
	waitForKubernetesService(t, cs)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "put", Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}
	got, err := cs.CoreV1().Services("default").Update(context.Background(), svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("PUT of a missing Service: %v", err)
	}
	if got.UID == "" || got.Spec.ClusterIP == "" || got.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("created Service: uid %q, clusterIP %q, nodePort %d; want all set", got.UID, got.Spec.ClusterIP, got.Spec.Ports[0].NodePort)
	}
	ip, err := cs.NetworkingV1().IPAddresses().Get(context.Background(), got.Spec.ClusterIP, metav1.GetOptions{})
	if err != nil || ip.Spec.ParentRef.Name != "put" {
		t.Fatalf("IPAddress of the Service's address: %v, %+v", err, ip)
	}
}
