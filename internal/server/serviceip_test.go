package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// startWithRange starts a whole admitd on dir (bolt) allocating from cidr.
func startWithRange(t *testing.T, dir, cidr string) (*Server, kubernetes.Interface) {
	t.Helper()
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.KubeconfigOut, o.ServiceClusterIPRange = dir, 0, "-", cidr
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

func TestServiceClusterIPAllocation(t *testing.T) {
	dir := t.TempDir()
	s, cs := startWithRange(t, dir, "127.1.0.0/29") // .1 reserved, .2-.6 free
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
	wantServiceError(t, cs, "b", a.Spec.ClusterIP, 422, "spec.clusterIPs: Invalid value: [\""+a.Spec.ClusterIP+"\"]: failed to allocate IP "+a.Spec.ClusterIP+": provided IP is already allocated")
	wantServiceError(t, cs, "b", "127.1.0.1", 422, "provided IP is already allocated")
	wantServiceError(t, cs, "b", "10.0.0.9", 422, "the provided IP (10.0.0.9) is not in the valid range. The range of valid IPs is 127.1.0.0/29")
	if h, err := createService(cs, "headless", corev1.ClusterIPNone); err != nil || h.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Fatalf("headless Service: %v, clusterIP %q; want None", err, h.Spec.ClusterIP)
	}
	if err := cs.CoreV1().Services("default").Delete(context.Background(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
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

func TestServiceTypeChangeAllocatesAndReleases(t *testing.T) {
	s, cs := startWithRange(t, t.TempDir(), "127.1.0.0/30") // one free address: .2
	defer func() { _ = s.Close() }()
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
