package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func endpointsWith(subsets ...corev1.EndpointSubset) *corev1.Endpoints {
	return &corev1.Endpoints{ObjectMeta: created("web"), Subsets: subsets}
}

func readyAt(ips ...string) []corev1.EndpointAddress {
	var out []corev1.EndpointAddress
	for _, ip := range ips {
		out = append(out, corev1.EndpointAddress{IP: ip})
	}
	return out
}

// Endpoints creates and updates are checked as upstream's
// ValidateEndpointsCreate and ValidateEndpointsUpdate (the messages are
// kube-apiserver 1.37.2's; test/upstream/endpointsvalidation compares
// thousands more).
func TestEndpointsValidation(t *testing.T) {
	tcp := corev1.ProtocolTCP
	invalid := endpointsWith(corev1.EndpointSubset{Addresses: readyAt("127.0.0.1")})
	runNetworkingCases(t, []networkingCase{
		{name: "valid", obj: endpointsWith(corev1.EndpointSubset{Addresses: readyAt("10.1.2.3"), Ports: []corev1.EndpointPort{{Port: 80}}})},
		{name: "subset without addresses", obj: endpointsWith(corev1.EndpointSubset{}),
			want: "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`"},
		{name: "loopback and link-local", obj: endpointsWith(corev1.EndpointSubset{Addresses: readyAt("127.0.0.1"), NotReadyAddresses: readyAt("fe80::1")}),
			want: "[subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128), " +
				"subsets[0].notReadyAddresses[0].ip: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)]"},
		{name: "leading zeros", obj: endpointsWith(corev1.EndpointSubset{Addresses: readyAt("010.0.0.1")}),
			want: `subsets[0].addresses[0].ip: Invalid value: "010.0.0.1": must not have leading 0s`},
		{name: "not an IP", obj: endpointsWith(corev1.EndpointSubset{Addresses: readyAt("nope")}),
			want: `[subsets[0].addresses[0].ip: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), ` +
				`subsets[0].addresses[0].ip: Invalid value: "nope": must be a valid IP address]`},
		{name: "hostname and node name", obj: endpointsWith(corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3", Hostname: "Bad_Host", NodeName: ptr.To("Node_1")}}}),
			want: "[subsets[0].addresses[0].hostname: Invalid value: \"Bad_Host\": " + dns1123LabelMsg + ", subsets[0].addresses[0].nodeName: Invalid value: \"Node_1\": " + dnsSubdomainMsg + "]"},
		{name: "ports", obj: endpointsWith(corev1.EndpointSubset{Addresses: readyAt("10.1.2.3"), Ports: []corev1.EndpointPort{
			{Port: 0, Protocol: "HTTP"}, {Name: "Bad_Name", Port: 70000, Protocol: tcp, AppProtocol: ptr.To("bad proto!")}}}),
			want: "[subsets[0].ports[0].name: Required value, subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive, " +
				"subsets[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\", " +
				"subsets[0].ports[1].name: Invalid value: \"Bad_Name\": " + dns1123LabelMsg + ", subsets[0].ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive, " +
				"subsets[0].ports[1].appProtocol: Invalid value: \"bad proto!\": " + qualifiedNameMsg + "]"},
		{name: "invalid subsets kept unchanged", obj: withLabels(invalid.DeepCopy()), old: invalid},
		{name: "invalid subsets changed", obj: endpointsWith(corev1.EndpointSubset{Addresses: readyAt("127.0.0.1", "10.0.0.1")}), old: invalid,
			want: `subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`},
	})
}

// created is the metadata of an object as stored.
func created(name string) metav1.ObjectMeta {
	m := meta1(name)
	m.UID = "0b6d5f0e-uid"
	return m
}

func withLabels[T interface{ SetLabels(map[string]string) }](obj T) T {
	obj.SetLabels(map[string]string{"changed": "yes"})
	return obj
}

func sliceWith(t discoveryv1.AddressType, endpoints ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: created("web-abc"), AddressType: t, Endpoints: endpoints,
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80)}}}
}

func at(addrs ...string) discoveryv1.Endpoint { return discoveryv1.Endpoint{Addresses: addrs} }

// EndpointSlice creates and updates are checked as upstream's
// ValidateEndpointSliceCreate and ValidateEndpointSliceUpdate, with 1.37's
// enforced beta declarative rules (address type, addresses) last.
func TestEndpointSliceValidation(t *testing.T) {
	v4 := discoveryv1.AddressTypeIPv4
	hinted := at("10.1.2.3")
	hinted.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "a"}, {Name: "a"}}, ForNodes: []discoveryv1.ForNode{{Name: "Node_1"}}}
	good := sliceWith(v4, at("10.1.2.3"))
	badKept := sliceWith(v4, at("fd00::1"))
	runNetworkingCases(t, []networkingCase{
		{name: "valid", obj: good},
		{name: "valid FQDN", obj: sliceWith(discoveryv1.AddressTypeFQDN, at("web.example.com"))},
		{name: "no address type, before the port errors", obj: &discoveryv1.EndpointSlice{ObjectMeta: meta1("s"),
			Ports: []discoveryv1.EndpointPort{{Name: ptr.To("Bad_Name")}}}, want: "[ports[0].name: Invalid value: \"Bad_Name\": " + dns1123LabelMsg + ", addressType: Required value]"},
		{name: "unknown address type", obj: sliceWith("IP", at("x")), want: `addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"`},
		{name: "family and specials", obj: sliceWith(v4, at("fd00::1", "127.0.0.1")), want: `[endpoints[0].addresses: Invalid value: "fd00::1": must be an IPv4 address, ` +
			`endpoints[0].addresses[1]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)]`},
		{name: "no addresses", obj: sliceWith(v4, at()), want: "endpoints[0].addresses: Required value"},
		{name: "duplicate port names", obj: &discoveryv1.EndpointSlice{ObjectMeta: meta1("s"), AddressType: v4,
			Ports: []discoveryv1.EndpointPort{{}, {Protocol: ptr.To[corev1.Protocol]("HTTP")}}}, want: `[ports[1].name: Duplicate value: "", ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"]`},
		{name: "hints", obj: sliceWith(v4, hinted), want: "[endpoints[0].hints.forZones[1].name: Duplicate value: \"a\", endpoints[0].hints.forNodes[0].name: Invalid value: \"Node_1\": " + dnsSubdomainMsg + "]"},
		{name: "address type changed", obj: sliceWith("Bogus", at("10.1.2.3")), old: good, want: `[addressType: Unsupported value: "Bogus": supported values: "FQDN", "IPv4", "IPv6", addressType: Invalid value: null: field is immutable]`},
		{name: "invalid endpoints kept unchanged", obj: withLabels(badKept.DeepCopy()), old: badKept},
	})
}

// A v1 write drops deprecatedTopology; a hostname the stored slice's
// topology named becomes the nodeName of an endpoint without one; the
// generation grows with the endpoints, ports or labels as sent.
func TestEndpointSlicePreparation(t *testing.T) {
	topo := func(node string) discoveryv1.Endpoint {
		e := at("10.1.2.3")
		e.DeprecatedTopology = map[string]string{corev1.LabelHostname: node}
		return e
	}
	old := sliceWith(discoveryv1.AddressTypeIPv4, topo("node-1"))
	old.Generation = 3
	next := old.DeepCopy()
	next.Endpoints = append(next.Endpoints, topo("node-9"))
	if errs := updateErrors(t, next, old); len(errs) > 0 {
		t.Fatalf("update: %v", errs)
	}
	if next.Generation != 4 {
		t.Errorf("generation = %d, want 4", next.Generation)
	}
	for i, want := range []*string{ptr.To("node-1"), nil} {
		ep := next.Endpoints[i]
		if ep.DeprecatedTopology != nil || (want == nil) != (ep.NodeName == nil) || (want != nil && *ep.NodeName != *want) {
			t.Errorf("endpoints[%d] = topology %v, nodeName %v; want no topology, nodeName %v", i, ep.DeprecatedTopology, ptr.Deref(ep.NodeName, "<nil>"), ptr.Deref(want, "<nil>"))
		}
	}
	created := sliceWith(discoveryv1.AddressTypeIPv4, topo("node-1"))
	if errs := createErrors(t, created); len(errs) > 0 || created.Endpoints[0].DeprecatedTopology != nil || created.Endpoints[0].NodeName != nil || created.Generation != 1 {
		t.Errorf("create: errors %v, endpoint %+v, generation %d; want none, no topology nor nodeName, 1", errs, created.Endpoints[0], created.Generation)
	}
	relabelled := withLabels(old.DeepCopy())
	if _ = updateErrors(t, relabelled, old); relabelled.Generation != 4 || relabelled.Endpoints[0].DeprecatedTopology == nil {
		t.Errorf("labels changed: generation %d, topology %v; want 4, kept (endpoints unchanged)", relabelled.Generation, relabelled.Endpoints[0].DeprecatedTopology)
	}
}
