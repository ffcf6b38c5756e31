package endpointslicemirroring

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func port(name string, p int32) corev1.EndpointPort {
	return corev1.EndpointPort{Name: name, Port: p, Protocol: corev1.ProtocolTCP}
}

func addrs(ips ...string) []corev1.EndpointAddress {
	var out []corev1.EndpointAddress
	for _, ip := range ips {
		out = append(out, corev1.EndpointAddress{IP: ip})
	}
	return out
}

// describe is "<type> <ports> [ip(ready) ...]" for each desired slice
// with endpoints, sorted.
func describe(m Mirror) []string {
	var out []string
	for _, d := range m.Slices {
		eps := d.Endpoints()
		if len(eps) == 0 {
			continue
		}
		var ports, ips []string
		for _, p := range d.Ports {
			ports = append(ports, fmt.Sprintf("%s:%d", *p.Name, *p.Port))
		}
		for _, e := range eps {
			ips = append(ips, fmt.Sprintf("%s(%v)", e.Addresses[0], *e.Conditions.Ready))
		}
		out = append(out, fmt.Sprintf("%s %s %s", d.AddressType, strings.Join(ports, ","), strings.Join(ips, " ")))
	}
	slices.Sort(out)
	return out
}

// Subsets are repacked, then split by address type: IPv4 and IPv6 of one
// subset go to two slices, a second port set to a third; an IPv4-mapped
// IPv6 address is IPv4, leading zeros are read as decimal, an invalid IP
// is counted and left out.
func TestDesiredSplitsByAddressTypeAndPorts(t *testing.T) {
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "default"}, Subsets: []corev1.EndpointSubset{
		{Addresses: addrs("10.0.0.1", "fd00::1", "::ffff:10.0.0.3"), NotReadyAddresses: addrs("010.0.0.2", "not-an-ip"), Ports: []corev1.EndpointPort{port("http", 80)}},
		{Addresses: addrs("10.0.1.1"), Ports: []corev1.EndpointPort{port("dns", 53)}},
	}}
	m := Desired(ep, DefaultMaxEndpointsPerSubset)
	got := describe(m)
	want := []string{
		"IPv4 dns:53 10.0.1.1(true)",
		"IPv4 http:80 10.0.0.1(true) 10.0.0.3(true) 10.0.0.2(false)",
		"IPv6 http:80 fd00::1(true)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Desired:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if m.Invalid != 1 || m.Skipped != 1 {
		t.Errorf("Invalid %d, Skipped %d; want 1, 1", m.Invalid, m.Skipped)
	}
}

// At most maxPerSubset addresses of each subset are mirrored, ready ones
// first; the others count as skipped.
func TestDesiredLimitsEachSubset(t *testing.T) {
	ep := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{
		{Addresses: addrs("10.0.0.1", "10.0.0.2"), NotReadyAddresses: addrs("10.0.0.3"), Ports: []corev1.EndpointPort{port("a", 1)}},
		{Addresses: addrs("10.0.1.1"), Ports: []corev1.EndpointPort{port("b", 2)}},
	}}
	m := Desired(ep, 2)
	got := strings.Join(describe(m), "\n")
	want := "IPv4 a:1 10.0.0.1(true) 10.0.0.2(true)\nIPv4 b:2 10.0.1.1(true)"
	if got != want || m.Skipped != 1 || m.Invalid != 0 {
		t.Errorf("Desired(max 2):\n%s (skipped %d, invalid %d)\nwant\n%s (skipped 1)", got, m.Skipped, m.Invalid, want)
	}
}

// A slice copies the Endpoints' labels and annotations but the
// trigger-time and last-applied ones, adds service-name and managed-by,
// is controlled by the Endpoints and named from "<name>-" (the name alone
// when that prefix would be too long).
func TestNewSlice(t *testing.T) {
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "ns", UID: "u1",
		Labels:      map[string]string{"team": "a"},
		Annotations: map[string]string{"note": "x", corev1.EndpointsLastChangeTriggerTime: "t", corev1.LastAppliedConfigAnnotation: "{}"}},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1", Hostname: "h", NodeName: ptr("n1"),
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "p"}}}}}}
	s := NewSlice(ep, Desired(ep, 10).Slices[0], "")
	if s.GenerateName != "ext-" || s.Name != "" || s.Namespace != "ns" {
		t.Errorf("name %q generateName %q namespace %q", s.Name, s.GenerateName, s.Namespace)
	}
	wantLabels := map[string]string{"team": "a", discovery.LabelServiceName: "ext", discovery.LabelManagedBy: ManagedBy}
	if fmt.Sprint(s.Labels) != fmt.Sprint(wantLabels) || fmt.Sprint(s.Annotations) != fmt.Sprint(map[string]string{"note": "x"}) {
		t.Errorf("labels %v annotations %v", s.Labels, s.Annotations)
	}
	if ref := metav1.GetControllerOf(s); ref == nil || ref.Kind != "Endpoints" || ref.APIVersion != "v1" || ref.UID != "u1" || !*ref.BlockOwnerDeletion {
		t.Errorf("controller %+v", ref)
	}
	if len(s.Ports) != 0 || s.Ports == nil {
		t.Errorf("ports %#v, want empty", s.Ports)
	}
	e := s.Endpoints[0]
	if *e.Hostname != "h" || *e.NodeName != "n1" || e.TargetRef.Name != "p" || !*e.Conditions.Ready || e.Conditions.Serving != nil {
		t.Errorf("endpoint %+v", e)
	}
	// upstream's check masks the trailing dash by replacing the last two
	// characters: even a 253-character name gets its dash
	long := strings.Repeat("a", 253)
	if got := namePrefix(long); got != long+"-" {
		t.Errorf("prefix of a 253-character name: %d characters, want 254", len(got))
	}
}

func ptr[T any](v T) *T { return &v }

// stored is s as the server would hold it: named, ports as decoded.
func stored(s *discovery.EndpointSlice, name string) *discovery.EndpointSlice {
	s = s.DeepCopy()
	s.Name = name
	return s
}

func TestPlanSlices(t *testing.T) {
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "default", UID: "u1"},
		Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1"), Ports: []corev1.EndpointPort{port("http", 80)}}}}
	m := Desired(ep, 10)
	current := stored(NewSlice(ep, m.Slices[0], ""), "ext-abcde")

	if p := PlanSlices(ep, nil, m); len(p.Create) != 1 || len(p.Update)+len(p.Delete)+len(p.Keep) != 0 {
		t.Errorf("no slices yet: %+v, want one create", p)
	}
	if p := PlanSlices(ep, []*discovery.EndpointSlice{current}, m); len(p.Keep) != 1 || len(p.Create)+len(p.Update)+len(p.Delete) != 0 {
		t.Errorf("slice up to date: %+v, want it kept", p)
	}
	dup := stored(current, "ext-fghij")
	if p := PlanSlices(ep, []*discovery.EndpointSlice{current, dup}, m); len(p.Keep) != 1 || len(p.Delete) != 1 || p.Delete[0].Name != "ext-fghij" {
		t.Errorf("two slices of one key: %+v, want the second deleted", p)
	}

	changed := ep.DeepCopy()
	changed.Subsets[0].NotReadyAddresses = addrs("10.0.0.2")
	if p := PlanSlices(changed, []*discovery.EndpointSlice{current}, Desired(changed, 10)); len(p.Update) != 1 || p.Update[0].Name != "ext-abcde" || len(p.Update[0].Endpoints) != 2 {
		t.Errorf("an address added: %+v, want ext-abcde updated with two endpoints", p)
	}
	relabelled := ep.DeepCopy()
	relabelled.Labels = map[string]string{"x": "y"}
	if p := PlanSlices(relabelled, []*discovery.EndpointSlice{current}, m); len(p.Update) != 1 {
		t.Errorf("a label added: %+v, want an update", p)
	}
	recreated := ep.DeepCopy()
	recreated.UID = "u2"
	if p := PlanSlices(recreated, []*discovery.EndpointSlice{current}, m); len(p.Update) != 1 || p.Update[0].OwnerReferences[0].UID != "u2" {
		t.Errorf("Endpoints recreated: %+v, want the slice updated to the new owner", p)
	}

	newPort := ep.DeepCopy()
	newPort.Subsets[0].Ports = []corev1.EndpointPort{port("http", 8080)}
	p := PlanSlices(newPort, []*discovery.EndpointSlice{current}, Desired(newPort, 10))
	if len(p.Create)+len(p.Delete) != 0 || len(p.Update) != 1 || p.Update[0].Name != "ext-abcde" || *p.Update[0].Ports[0].Port != 8080 {
		t.Errorf("port changed: %+v, want ext-abcde recycled with port 8080", p)
	}
	emptied := ep.DeepCopy()
	emptied.Subsets = nil
	if p := PlanSlices(emptied, []*discovery.EndpointSlice{current}, Desired(emptied, 10)); len(p.Delete) != 1 || len(p.Create)+len(p.Update) != 0 {
		t.Errorf("no subsets: %+v, want the slice deleted", p)
	}
}
