package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestServiceResolver(t *testing.T) {
	services := map[string]*corev1.Service{
		"ext":    {Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "hooks.example.com"}},
		"sliced": {ObjectMeta: metav1.ObjectMeta{Name: "sliced", Namespace: "ns"}, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.9", Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}},
		"ip":     {ObjectMeta: metav1.ObjectMeta{Name: "ip", Namespace: "ns"}, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.7"}},
	}
	slice := &discoveryv1.EndpointSlice{
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.1.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}},
			{Addresses: []string{"10.1.0.2"}},
		},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To[int32](8443)}},
	}
	dir := t.TempDir()
	mapPath := filepath.Join(dir, "svc.json")
	if err := os.WriteFile(mapPath, []byte(`{"mapped.ns.svc":"127.0.0.1:9443"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &serviceResolver{mapPath: mapPath,
		services: func(_ context.Context, _, name string) (*corev1.Service, error) {
			if s, ok := services[name]; ok {
				return s, nil
			}
			return nil, errors.New("not found")
		},
		slices: func(_ context.Context, _, svc string) ([]*discoveryv1.EndpointSlice, error) {
			if svc == "sliced" {
				return []*discoveryv1.EndpointSlice{slice}, nil
			}
			return nil, nil
		},
	}
	cases := []struct{ name, want, err string }{
		{"mapped", "127.0.0.1:9443", ""},
		{"ext", "hooks.example.com:443", ""},
		{"sliced", "10.1.0.2:8443", ""},
		{"ip", "10.0.0.7:443", ""},
		{"missing", "", `service "missing" not found`},
	}
	for _, tc := range cases {
		got, err := r.ResolveService("ns", tc.name, 443)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("ResolveService(ns, %s, 443) = %q, %v, want %q, %q", tc.name, got, err, tc.want, tc.err)
		}
	}
	// the map is re-read when it changes
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(mapPath, []byte(`{"mapped.ns.svc":"127.0.0.1:9555"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	_ = os.Chtimes(mapPath, later, later)
	if got, _ := r.ResolveService("ns", "mapped", 443); got != "127.0.0.1:9555" {
		t.Errorf("after rewriting the map ResolveService = %q, want 127.0.0.1:9555", got)
	}
}
