package endpointslicemirroring

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/internal/controllers/controllertest"
)

// start runs an in-process API server over memory storage with the
// controller (at most maxPerSubset addresses a subset), and returns an
// administrator's client.
func start(t *testing.T, maxPerSubset int) kubernetes.Interface {
	t.Helper()
	s := controllertest.Start(t)
	client, recorder := s.Controller(User, Component)
	c, err := New(Config{Store: s.Store, Catalogue: s.Catalogue, Client: client, Recorder: recorder, Log: s.Log, MaxEndpointsPerSubset: maxPerSubset})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(s.Ctx)
	return s.Admin
}

// mirrors describes the slices mirroring the Endpoints name: "<type>
// <port> <ip>..." each, sorted.
func mirrors(t *testing.T, c kubernetes.Interface, name string) ([]discovery.EndpointSlice, string) {
	list, err := c.DiscoveryV1().EndpointSlices("default").List(t.Context(),
		metav1.ListOptions{LabelSelector: discovery.LabelServiceName + "=" + name + "," + discovery.LabelManagedBy + "=" + ManagedBy})
	if err != nil {
		return nil, err.Error()
	}
	var out []string
	for _, s := range list.Items {
		var ips []string
		for _, e := range s.Endpoints {
			ips = append(ips, e.Addresses[0])
		}
		slices.Sort(ips)
		p := "-"
		if len(s.Ports) > 0 {
			p = fmt.Sprint(*s.Ports[0].Port)
		}
		out = append(out, fmt.Sprintf("%s %s %s", s.AddressType, p, strings.Join(ips, " ")))
	}
	slices.Sort(out)
	return list.Items, strings.Join(out, "; ")
}

func waitMirrors(t *testing.T, c kubernetes.Interface, name, want string) []discovery.EndpointSlice {
	t.Helper()
	var items []discovery.EndpointSlice
	controllertest.Eventually(t, 10*time.Second, "slices of "+name+" "+want, func() (bool, string) {
		var got string
		items, got = mirrors(t, c, name)
		return got == want, got
	})
	return items
}

func createService(t *testing.T, c kubernetes.Interface, name string, selector map[string]string) *corev1.Service {
	t.Helper()
	svc, err := c.CoreV1().Services("default").Create(t.Context(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func createEndpoints(t *testing.T, c kubernetes.Interface, name string, ips ...string) *corev1.Endpoints {
	t.Helper()
	ep, err := c.CoreV1().Endpoints("default").Create(t.Context(), &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "a"}},
		Subsets: []corev1.EndpointSubset{{Addresses: addrs(ips...), Ports: []corev1.EndpointPort{port("http", 80)}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// The Endpoints of a selector-less Service is mirrored (one slice per
// address type, labelled, owned by the Endpoints, written by the
// controller's service account), kept in step with its updates (the same
// slice rewritten), and the slices are deleted when the Endpoints is
// labelled skip-mirror, when the Service gains a selector, or when the
// Endpoints goes. An Endpoints without Service is mirrored once the
// Service comes.
func TestMirrorFollowsEndpointsAndService(t *testing.T) {
	c := start(t, 0)
	ctx := t.Context()
	createService(t, c, "ext", nil)
	ep := createEndpoints(t, c, "ext", "10.0.0.1", "fd00::1")
	items := waitMirrors(t, c, "ext", "IPv4 80 10.0.0.1; IPv6 80 fd00::1")
	for _, s := range items {
		if ref := metav1.GetControllerOf(&s); ref == nil || ref.Kind != "Endpoints" || ref.UID != ep.UID || s.Labels["team"] != "a" || s.GenerateName != "ext-" {
			t.Errorf("slice %s: controller %v, labels %v, generateName %q", s.Name, ref, s.Labels, s.GenerateName)
		}
		if m := s.ManagedFields; len(m) == 0 || m[0].Manager != "kube-controller-manager" {
			t.Errorf("slice %s: managed fields %+v", s.Name, m)
		}
	}
	var v4 string
	for _, s := range items {
		if s.AddressType == discovery.AddressTypeIPv4 {
			v4 = s.Name
		}
	}

	ep.Subsets[0].Addresses = addrs("10.0.0.1", "10.0.0.2")
	ep, err := c.CoreV1().Endpoints("default").Update(ctx, ep, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items = waitMirrors(t, c, "ext", "IPv4 80 10.0.0.1 10.0.0.2")
	if items[0].Name != v4 {
		t.Errorf("updated slice %s, want %s rewritten", items[0].Name, v4)
	}

	ep.Labels[discovery.LabelSkipMirror] = "true"
	if ep, err = c.CoreV1().Endpoints("default").Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMirrors(t, c, "ext", "")
	delete(ep.Labels, discovery.LabelSkipMirror)
	if _, err = c.CoreV1().Endpoints("default").Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMirrors(t, c, "ext", "IPv4 80 10.0.0.1 10.0.0.2")

	svc, err := c.CoreV1().Services("default").Get(ctx, "ext", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Selector = map[string]string{"app": "ext"}
	if _, err := c.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMirrors(t, c, "ext", "")

	createEndpoints(t, c, "later", "10.0.9.9")
	time.Sleep(300 * time.Millisecond)
	if _, got := mirrors(t, c, "later"); got != "" {
		t.Errorf("Endpoints without Service mirrored: %s", got)
	}
	createService(t, c, "later", nil)
	waitMirrors(t, c, "later", "IPv4 80 10.0.9.9")
	if err := c.CoreV1().Endpoints("default").Delete(ctx, "later", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMirrors(t, c, "later", "")
}

// A slice of the controller's deleted by someone else is recreated; one
// edited is put back.
func TestMirrorRepairsSlices(t *testing.T) {
	c := start(t, 0)
	ctx := t.Context()
	createService(t, c, "ext", nil)
	createEndpoints(t, c, "ext", "10.0.0.1")
	items := waitMirrors(t, c, "ext", "IPv4 80 10.0.0.1")
	s := items[0]
	s.Endpoints = append(s.Endpoints, discovery.Endpoint{Addresses: []string{"10.0.0.99"}})
	if _, err := c.DiscoveryV1().EndpointSlices("default").Update(ctx, &s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMirrors(t, c, "ext", "IPv4 80 10.0.0.1")
	if err := c.DiscoveryV1().EndpointSlices("default").Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 10*time.Second, "a new slice", func() (bool, string) {
		items, got := mirrors(t, c, "ext")
		return got == "IPv4 80 10.0.0.1" && items[0].Name != s.Name, got
	})
}

// Past the per-subset limit addresses are left out with a
// TooManyAddressesToMirror warning on the Endpoints (invalid IPs, the
// other warning, are refused by Endpoints validation: see
// TestDesiredSplitsByAddressTypeAndPorts).
func TestMirrorWarnsOfSkippedAddresses(t *testing.T) {
	c := start(t, 2)
	ctx := t.Context()
	createService(t, c, "ext", nil)
	createEndpoints(t, c, "ext", "10.0.0.1", "10.0.0.2", "10.0.0.3")
	waitMirrors(t, c, "ext", "IPv4 80 10.0.0.1 10.0.0.2")
	controllertest.Eventually(t, 10*time.Second, "a TooManyAddressesToMirror event", func() (bool, string) {
		events, err := c.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var got []string
		for _, e := range events.Items {
			got = append(got, fmt.Sprintf("%s %s %s/%s %s: %s", e.Source.Component, e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message))
		}
		want := "endpoint-slice-mirroring-controller Warning Endpoints/ext TooManyAddressesToMirror: A max of 2 addresses can be mirrored to EndpointSlices per Endpoints subset. 1 addresses were skipped"
		return slices.Contains(got, want), strings.Join(got, "\n")
	})
}
