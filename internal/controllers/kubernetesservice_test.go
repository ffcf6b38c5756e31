package controllers

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// The kubernetes Service is created once and then left alone; its
// Endpoints and EndpointSlice are brought back to the server's address
// when changed or deleted, as upstream's lease reconciler does.
func TestKubernetesService(t *testing.T) {
	c := newCluster(t)
	apiserver := authenticationv1.UserInfo{Username: "system:apiserver", Groups: []string{"system:masters"}}
	ctl := NewKubernetesService(c.client(apiserver), net.ParseIP("10.0.0.1"), net.ParseIP("192.0.2.10"), 6443, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	sync := func() {
		t.Helper()
		if err := ctl.Sync(ctx); err != nil {
			t.Fatalf("Sync: %v", err)
		}
	}
	const (
		svcPath   = "/api/v1/namespaces/default/services/kubernetes"
		epPath    = "/api/v1/namespaces/default/endpoints/kubernetes"
		slicePath = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"
	)
	sync()
	var svc corev1.Service
	c.decode(svcPath, &svc)
	if svc.Spec.ClusterIP != "10.0.0.1" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.IntVal != 6443 ||
		svc.Labels["component"] != "apiserver" || svc.Labels["provider"] != "kubernetes" {
		t.Errorf("kubernetes Service = %+v", svc)
	}
	wantEndpoints := func(what string) {
		t.Helper()
		var ep corev1.Endpoints
		c.decode(epPath, &ep)
		if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].IP != "192.0.2.10" ||
			ep.Subsets[0].Ports[0].Port != 6443 || ep.Labels[discoveryv1.LabelSkipMirror] != "true" {
			t.Errorf("%s: Endpoints = %+v", what, ep)
		}
		var slice discoveryv1.EndpointSlice
		c.decode(slicePath, &slice)
		if len(slice.Endpoints) != 1 || slice.Endpoints[0].Addresses[0] != "192.0.2.10" || *slice.Ports[0].Port != 6443 ||
			slice.Labels[discoveryv1.LabelServiceName] != "kubernetes" || slice.AddressType != discoveryv1.AddressTypeIPv4 {
			t.Errorf("%s: EndpointSlice = %+v", what, slice)
		}
	}
	wantEndpoints("created")

	c.must(http.StatusOK, "PATCH", epPath, `{"subsets":[{"addresses":[{"ip":"10.1.1.1"}],"ports":[{"name":"https","port":1}]}]}`)
	c.must(http.StatusOK, "DELETE", slicePath, "")
	c.must(http.StatusOK, "PATCH", svcPath, `{"spec":{"ports":[{"name":"https","port":443,"targetPort":7000}]}}`)
	sync()
	wantEndpoints("repaired")
	c.decode(svcPath, &svc)
	if svc.Spec.Ports[0].TargetPort.IntVal != 7000 {
		t.Errorf("the existing Service was reset (target port %v); upstream leaves it", svc.Spec.Ports[0].TargetPort)
	}
	c.must(http.StatusOK, "DELETE", svcPath, "")
	sync()
	c.decode(svcPath, &svc)
	if svc.Spec.Ports[0].TargetPort.IntVal != 6443 {
		t.Errorf("recreated Service target port = %v, want 6443", svc.Spec.Ports[0].TargetPort)
	}
}

// decode reads the object at path into out.
func (c *cluster) decode(path string, out any) {
	c.t.Helper()
	code, body := c.do("GET", path, "")
	if code != http.StatusOK {
		c.t.Fatalf("GET %s = %d %s", path, code, body)
	}
	if err := json.Unmarshal([]byte(body), out); err != nil {
		c.t.Fatal(err)
	}
}
