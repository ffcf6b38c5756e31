package endpointsvalidation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// Targeted cases: the shapes of upstream's own validation and strategy
// tests (pkg/apis/core/validation TestValidateEndpointsCreate and
// TestValidateEndpointsUpdate, pkg/apis/discovery/validation,
// pkg/registry/discovery/endpointslice's topology and generation tests)
// written as v1 objects, plus the ratcheting and declarative edges.

func endpoints(subsets ...corev1.EndpointSubset) *corev1.Endpoints {
	return &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "mysvc", Namespace: "default", ResourceVersion: "1"}, Subsets: subsets}
}

func subset(ips []string, ports ...corev1.EndpointPort) corev1.EndpointSubset {
	s := corev1.EndpointSubset{Ports: ports}
	for _, ip := range ips {
		s.Addresses = append(s.Addresses, corev1.EndpointAddress{IP: ip})
	}
	return s
}

func port(name string, number int32, protocol corev1.Protocol) corev1.EndpointPort {
	return corev1.EndpointPort{Name: name, Port: number, Protocol: protocol}
}

func upstreamEndpoints() map[string]*corev1.Endpoints {
	tcp := corev1.ProtocolTCP
	return map[string]*corev1.Endpoints{
		"two subsets":             endpoints(subset([]string{"10.10.1.1", "10.10.2.2"}, port("a", 8675, tcp), port("b", 309, tcp)), subset([]string{"10.10.3.3"}, port("a", 93, tcp), port("b", 76, tcp))),
		"one unnamed port":        endpoints(subset([]string{"10.10.1.1"}, port("", 8675, tcp))),
		"app protocol":            endpoints(subset([]string{"10.10.1.1"}, corev1.EndpointPort{Port: 8675, Protocol: tcp, AppProtocol: ptr.To("HTTP")})),
		"no ports":                endpoints(subset([]string{"10.10.3.3"})),
		"leading zeros, mapped":   endpoints(subset([]string{"010.010.001.001", "10.10.2.2"}, port("a", 1, tcp)), subset([]string{"::ffff:10.10.3.3"}, port("a", 2, tcp))),
		"no addresses":            endpoints(subset(nil, port("a", 93, tcp))),
		"bracketed ipv6":          endpoints(subset([]string{"[2001:0db8:85a3:0042:1000:8a2e:0370:7334]"}, port("a", 93, tcp))),
		"all leading zeros":       endpoints(subset([]string{"001.002.003.004"}, port("a", 93, tcp))),
		"two ports, one unnamed":  endpoints(subset([]string{"10.10.1.1"}, port("", 8675, tcp), port("b", 309, tcp))),
		"port too big":            endpoints(subset([]string{"10.10.1.1"}, port("a", 66000, tcp))),
		"bad protocol":            endpoints(subset([]string{"10.10.1.1"}, port("a", 93, "Protocol"))),
		"port without number":     endpoints(subset([]string{"10.10.1.1"}, port("a", 0, tcp))),
		"port without protocol":   endpoints(subset([]string{"10.10.1.1"}, port("a", 93, ""))),
		"loopback":                endpoints(subset([]string{"127.0.0.1"}, port("p", 93, tcp))),
		"link-local":              endpoints(subset([]string{"169.254.169.254"}, port("p", 93, tcp))),
		"link-local multicast":    endpoints(subset([]string{"224.0.0.1"}, port("p", 93, tcp))),
		"ipv6 specials":           endpoints(subset([]string{"::1", "fe80::1", "ff02::1", "::", "0.0.0.0"}, port("p", 93, tcp))),
		"bad app protocol":        endpoints(subset([]string{"10.10.1.1"}, corev1.EndpointPort{Name: "p", Port: 93, Protocol: tcp, AppProtocol: ptr.To("lots-of[invalid]-{chars}")})),
		"bad hostname, node name": {ObjectMeta: metav1.ObjectMeta{Name: "mysvc", Namespace: "default"}, Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3", Hostname: "Bad_Host", NodeName: ptr.To("Node_1")}}, NotReadyAddresses: []corev1.EndpointAddress{{IP: "nope", NodeName: ptr.To("")}}}}},
		"empty subset":            endpoints(corev1.EndpointSubset{}),
		"bad metadata too":        {ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name", Namespace: "default", Labels: map[string]string{"bad key!": "v"}}, Subsets: []corev1.EndpointSubset{{}}},
	}
}

func slice(t discoveryv1.AddressType, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", ResourceVersion: "1", Generation: 1},
		AddressType: t, Endpoints: eps, Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](80)}}}
}

func ep(addrs ...string) discoveryv1.Endpoint { return discoveryv1.Endpoint{Addresses: addrs} }

func many[T any](n int, v T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func upstreamSlices() map[string]*discoveryv1.EndpointSlice {
	v4, v6, fqdn := discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN
	withPorts := func(s *discoveryv1.EndpointSlice, ports ...discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
		s.Ports = ports
		return s
	}
	hinted := func(h discoveryv1.EndpointHints) discoveryv1.Endpoint {
		e := ep("10.1.2.3")
		e.Hints = &h
		return e
	}
	zoneHints := func(names ...string) discoveryv1.EndpointHints {
		h := discoveryv1.EndpointHints{}
		for _, n := range names {
			h.ForZones = append(h.ForZones, discoveryv1.ForZone{Name: n})
		}
		return h
	}
	nodeHints := func(names ...string) discoveryv1.EndpointHints {
		h := discoveryv1.EndpointHints{}
		for _, n := range names {
			h.ForNodes = append(h.ForNodes, discoveryv1.ForNode{Name: n})
		}
		return h
	}
	return map[string]*discoveryv1.EndpointSlice{
		"good ipv4":                   slice(v4, ep("10.1.2.3"), ep("10.1.2.4")),
		"good ipv6":                   slice(v6, ep("fd00::1")),
		"good fqdn":                   slice(fqdn, ep("example.com")),
		"ipv6 in ipv4":                slice(v4, ep("fd00::1")),
		"ipv4 in ipv6":                slice(v6, ep("10.1.2.3")),
		"non-canonical ipv6":          slice(v6, ep("FD00::1", "fd00:0::1")),
		"leading zeros in ipv4":       slice(v4, ep("010.001.002.003")),
		"specials":                    slice(v4, ep("127.0.0.1", "169.254.1.1", "224.0.0.1", "0.0.0.0")),
		"ipv6 specials":               slice(v6, ep("::1", "fe80::1", "ff02::1", "::")),
		"bad fqdn":                    slice(fqdn, ep("Bad_Name.com", "a", "x..y")),
		"no address type":             slice("", ep("10.1.2.3")),
		"no address type, bad ports":  withPorts(slice("", ep()), discoveryv1.EndpointPort{Name: ptr.To("Bad_Name")}),
		"unknown address type":        slice("IP", ep("anything")),
		"no addresses":                slice(v4, ep()),
		"101 addresses":               slice(v4, ep(many(101, "10.1.2.3")...)),
		"1001 endpoints":              slice(v4, many(1001, ep())...),
		"1000 endpoints":              slice(v4, many(1000, ep("10.1.2.3"))...),
		"duplicate port names":        withPorts(slice(v4), discoveryv1.EndpointPort{Name: ptr.To(""), Protocol: ptr.To(corev1.ProtocolTCP)}, discoveryv1.EndpointPort{Name: ptr.To(""), Protocol: ptr.To(corev1.ProtocolUDP)}),
		"bad port name and protocol":  withPorts(slice(v4), discoveryv1.EndpointPort{Name: ptr.To("Bad_Name"), Protocol: ptr.To[corev1.Protocol]("HTTP"), AppProtocol: ptr.To("bad proto!")}),
		"port without protocol":       withPorts(slice(v4), discoveryv1.EndpointPort{Name: ptr.To("")}),
		"20001 ports":                 withPorts(slice(v4), many(20001, discoveryv1.EndpointPort{Name: ptr.To("x"), Protocol: ptr.To(corev1.ProtocolTCP)})...),
		"bad node name and hostname":  slice(v4, discoveryv1.Endpoint{Addresses: []string{"10.1.2.3"}, NodeName: ptr.To("Node_1"), Hostname: ptr.To("Bad_Host")}),
		"zone hints":                  slice(v4, hinted(zoneHints("zone-a", "zone-a", "bad zone!"))),
		"nine zone hints":             slice(v4, hinted(zoneHints(many(9, "zone-a")...))),
		"node hints":                  slice(v4, hinted(nodeHints("node-1", "node-1", "Node_1"))),
		"nine node hints":             slice(v4, hinted(nodeHints(many(9, "node-1")...))),
		"topology on create":          slice(v4, discoveryv1.Endpoint{Addresses: []string{"10.1.2.3"}, DeprecatedTopology: map[string]string{corev1.LabelHostname: "node-1", corev1.LabelTopologyZone: "a", "bad key!": "x"}}),
		"fqdn, managed":               {ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "default", Labels: map[string]string{discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}}, AddressType: fqdn},
		"no endpoints, no ports":      {ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "default"}, AddressType: v4},
		"bad metadata and everything": {ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name", Namespace: "default"}, AddressType: "Bogus", Endpoints: []discoveryv1.Endpoint{{}}},
	}
}

func serviceAccounts() map[string]*corev1.ServiceAccount {
	sa := func(name string) *corev1.ServiceAccount {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: "1"}}
	}
	withSecrets := sa("builder")
	withSecrets.Secrets = []corev1.ObjectReference{{Name: "token", Namespace: "other", Kind: "Secret", UID: "u"}, {Name: "Bad_Name"}}
	withSecrets.ImagePullSecrets = []corev1.LocalObjectReference{{Name: ""}, {Name: "Bad_Name"}}
	annotated := sa("builder")
	annotated.Annotations = map[string]string{"kubernetes.io/enforce-mountable-secrets": "true"}
	return map[string]*corev1.ServiceAccount{
		"plain": sa("default"), "bad name": sa("Bad_Name"), "long name": sa(strings.Repeat("a", 254)),
		"secrets": withSecrets, "enforce-mountable-secrets": annotated,
	}
}

func TestUpstreamTables(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	both := func(name string, obj runtime.Object) {
		for _, defaulted := range []bool{false, true} {
			nameSlicePorts(obj)
			compare(t, cat, write{Name: fmt.Sprintf("%s (defaulted %v)", name, defaulted), Obj: obj, Defaulted: defaulted}, &c)
		}
	}
	for name, e := range upstreamEndpoints() {
		both("endpoints "+name, e)
	}
	for name, s := range upstreamSlices() {
		both("endpointslice "+name, s)
	}
	for name, s := range serviceAccounts() {
		both("serviceaccount "+name, s)
	}
	for _, w := range updates() {
		compare(t, cat, w, &c)
	}
	t.Log(c.String())
}

// updates are upstream's update cases and the ratcheting and preparation
// edges: invalid data kept unchanged, an address type changed, topology
// turned into a node name, generation bumps.
func updates() []write {
	tcp := corev1.ProtocolTCP
	var ws []write
	add := func(name string, old, obj runtime.Object) {
		ws = append(ws, write{Name: "update: " + name, Old: old, Obj: obj, Defaulted: true})
	}
	// Endpoints.
	bad := endpoints(subset([]string{"127.0.0.1", "nope"}, port("", 0, tcp), port("", 80, tcp)))
	add("endpoints invalid subsets unchanged", bad, relabel(bad.DeepCopy()))
	grown := bad.DeepCopy()
	grown.Subsets = append(grown.Subsets, subset([]string{"10.0.0.1"}))
	add("endpoints invalid subsets changed", bad, grown)
	good := endpoints(subset([]string{"10.1.2.3"}, port("a", 8675, tcp)))
	withApp := good.DeepCopy()
	withApp.Subsets[0].Ports[0].AppProtocol = ptr.To("https")
	add("endpoints app protocol added", good, withApp)
	withBadApp := good.DeepCopy()
	withBadApp.Subsets[0].Ports[0].AppProtocol = ptr.To("~https")
	add("endpoints bad app protocol added", good, withBadApp)
	nodeMoved := endpoints(corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3", NodeName: ptr.To("node-2")}}})
	add("endpoints node name changed", endpoints(corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3", NodeName: ptr.To("node-1")}}}), nodeMoved)
	renamed := good.DeepCopy()
	renamed.Name = "other"
	add("endpoints renamed", good, renamed)
	// EndpointSlices.
	badSlice := slice(discoveryv1.AddressTypeIPv4, ep("fd00::1"), ep())
	add("slice invalid endpoints unchanged", badSlice, relabel(badSlice.DeepCopy()))
	changedBad := badSlice.DeepCopy()
	changedBad.Endpoints = append(changedBad.Endpoints, ep("10.0.0.9"))
	add("slice invalid endpoints changed", badSlice, changedBad)
	good4 := slice(discoveryv1.AddressTypeIPv4, ep("10.1.2.3"))
	for _, t := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN, "", "Bogus"} {
		next := good4.DeepCopy()
		next.AddressType = t
		add(fmt.Sprintf("slice address type to %q", t), good4, next)
	}
	unknownOld := slice("Bogus", ep("x"))
	add("slice unknown stored type kept", unknownOld, relabel(unknownOld.DeepCopy()))
	portsChanged := good4.DeepCopy()
	portsChanged.Ports[0].Port = ptr.To[int32](81)
	add("slice ports changed", good4, portsChanged)
	add("slice labels changed", good4, relabel(good4.DeepCopy()))
	annotated := good4.DeepCopy()
	annotated.Annotations = map[string]string{"a": "b"}
	add("slice annotations changed", good4, annotated)
	topoOld := slice(discoveryv1.AddressTypeIPv4,
		discoveryv1.Endpoint{Addresses: []string{"10.1.2.3"}, DeprecatedTopology: map[string]string{corev1.LabelHostname: "node-1"}},
		discoveryv1.Endpoint{Addresses: []string{"10.1.2.4"}, DeprecatedTopology: map[string]string{corev1.LabelHostname: "Node_Bad"}})
	add("slice topology unchanged", topoOld, topoOld.DeepCopy())
	topoNext := topoOld.DeepCopy()
	topoNext.Endpoints = append(topoNext.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.1.2.5"}, DeprecatedTopology: map[string]string{corev1.LabelHostname: "node-9"}})
	add("slice topology to node names", topoOld, topoNext)
	topoNamed := topoOld.DeepCopy()
	topoNamed.Endpoints[0].NodeName = ptr.To("node-7")
	add("slice topology with a node name", topoOld, topoNamed)
	topoAdded := good4.DeepCopy()
	topoAdded.Endpoints[0].DeprecatedTopology = map[string]string{corev1.LabelHostname: "node-1"}
	add("slice topology added", good4, topoAdded)
	// ServiceAccounts.
	sas := serviceAccounts()
	add("serviceaccount annotation added", sas["secrets"], withAnnotation(sas["secrets"]))
	add("serviceaccount annotation kept", sas["enforce-mountable-secrets"], relabel(sas["enforce-mountable-secrets"].DeepCopy()))
	add("serviceaccount secrets cleaned", sas["plain"], withSecretsOf(sas["plain"], sas["secrets"]))
	return ws
}

func relabel[T runtime.Object](obj T) T {
	metaOf(obj).Labels = map[string]string{"changed": "yes"}
	return obj
}

func withAnnotation(sa *corev1.ServiceAccount) *corev1.ServiceAccount {
	out := sa.DeepCopy()
	out.Annotations = map[string]string{"kubernetes.io/enforce-mountable-secrets": "true"}
	return out
}

func withSecretsOf(sa, from *corev1.ServiceAccount) *corev1.ServiceAccount {
	out := sa.DeepCopy()
	out.Secrets, out.ImagePullSecrets = from.Secrets, from.ImagePullSecrets
	return out
}
