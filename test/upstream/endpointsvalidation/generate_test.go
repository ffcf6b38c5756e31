package endpointsvalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/admitd/admitd/internal/registry"
)

// writesPerKind are the generated creates and updates compared per kind.
const writesPerKind = 2000

var kinds = []string{"Endpoints", "EndpointSlice", "ServiceAccount"}

func TestGenerated(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for ki, kind := range kinds {
		g := &generator{rng: rand.New(rand.NewSource(int64(ki + 1)))}
		for i := range writesPerKind {
			w := write{Name: fmt.Sprintf("%s #%d create", kind, i), Defaulted: !g.chance(8)}
			if g.chance(2) {
				w.Obj = g.object(kind)
			} else {
				w.Old = g.stored(kind)
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update", kind, i), g.changed(w.Old), true
			}
			if !w.Defaulted {
				// A port name is never nil after decoding; upstream's
				// validation takes it as given.
				nameSlicePorts(w.Obj)
			}
			compare(t, cat, w, &c)
		}
	}
	t.Log(c.String())
	if c.Refused < len(kinds)*writesPerKind/4 || c.Accepted < len(kinds)*writesPerKind/8 || c.Warned == 0 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

type generator struct{ rng *rand.Rand }

func (g *generator) pick(options ...string) string { return options[g.rng.Intn(len(options))] }

func (g *generator) chance(n int) bool { return g.rng.Intn(n) == 0 }

// mostly returns valid most of the time, else any of the others.
func (g *generator) mostly(valid string, others ...string) string {
	if g.rng.Intn(4) != 0 {
		return valid
	}
	return g.pick(others...)
}

// maybe is a pointer to one of options, or nil one time in three.
func (g *generator) maybe(options ...string) *string {
	if g.chance(3) {
		return nil
	}
	s := g.pick(options...)
	return &s
}

var (
	goodIPv4  = []string{"10.0.0.1", "10.1.2.3", "192.168.7.9", "8.8.8.8"}
	goodIPv6  = []string{"fd00::1", "2001:db8::7", "fd00:1234::10"}
	badIPs    = []string{"127.0.0.1", "::1", "169.254.1.1", "fe80::1", "224.0.0.5", "ff02::1", "0.0.0.0", "::", "010.0.0.1", "::ffff:10.0.0.1", "nope", "", "10.0.0.256", "FD00::1", "fd00:0::1", "1.2.3.4/24", "239.1.1.1"}
	fqdns     = []string{"example.com", "web.default.svc", "Bad_Name.com", "a", "x..y", "-a.com", strings.Repeat("l", 64) + ".com", "UPPER.example.com"}
	labels    = []string{"", "web-0", "Bad_Host", "a.b", "-x", strings.Repeat("h", 64)}
	nodes     = []string{"node-1", "node-2.example", "Node_1", "", "a..b", strings.Repeat("n", 254)}
	portNames = []string{"", "http", "https", "Bad_Name", "-p", strings.Repeat("p", 64)}
	protocols = []string{"TCP", "UDP", "SCTP", "", "HTTP", "tcp"}
	appProtos = []string{"http", "kubernetes.io/h2c", "bad proto!", "", "example.com/x/y"}
	zones     = []string{"zone-a", "zone-b", "bad zone!", "", strings.Repeat("z", 64)}
	topoKeys  = []string{corev1.LabelHostname, corev1.LabelTopologyZone, "example.com/rack", "bad key!", ""}
)

func (g *generator) ip(v6 bool) string {
	good := goodIPv4
	if v6 {
		good = goodIPv6
	}
	return g.mostly(g.pick(good...), append(append([]string{}, badIPs...), goodIPv6[0], goodIPv4[0])...)
}

func (g *generator) meta(name string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: g.mostly(name, "", "Bad_Name", "a/b", strings.Repeat("n", 254)), Namespace: "default"}
	if g.chance(12) {
		m.GenerateName = g.pick("gen-", "Bad_", "a/")
	}
	if g.chance(8) {
		m.Labels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", "bad value!")}
	}
	if g.chance(6) {
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[g.pick("endpoints.kubernetes.io/managed-by", discoveryv1.LabelManagedBy)] =
			g.pick("endpoint-controller", "endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io", "someone")
	}
	if g.chance(15) {
		m.Finalizers = []string{g.pick("cleanup", "example.com/x", "kubernetes")}
	}
	if g.chance(10) {
		m.Generation = int64(g.rng.Intn(4) - 1)
	}
	if g.chance(20) {
		m.Namespace = g.pick("", "Bad_NS")
	}
	return m
}

func (g *generator) object(kind string) runtime.Object {
	switch kind {
	case "Endpoints":
		ep := &corev1.Endpoints{ObjectMeta: g.meta("web")}
		for range g.rng.Intn(4) {
			ep.Subsets = append(ep.Subsets, g.subset())
		}
		return ep
	case "EndpointSlice":
		return g.slice()
	}
	return g.serviceAccount()
}

func (g *generator) subset() corev1.EndpointSubset {
	var s corev1.EndpointSubset
	v6 := g.chance(3)
	for range g.rng.Intn(3) {
		s.Addresses = append(s.Addresses, g.address(v6))
	}
	for range g.rng.Intn(2) {
		s.NotReadyAddresses = append(s.NotReadyAddresses, g.address(v6))
	}
	for range g.rng.Intn(4) {
		p := corev1.EndpointPort{Name: g.mostly("http", portNames...), Port: int32(g.pick4(80, 8080, 0, 65536)),
			Protocol: corev1.Protocol(g.mostly("TCP", protocols...))}
		if g.chance(3) {
			p.AppProtocol = g.maybe(appProtos...)
		}
		s.Ports = append(s.Ports, p)
	}
	return s
}

func (g *generator) pick4(valid, other, bad1, bad2 int) int {
	switch g.rng.Intn(8) {
	case 0:
		return bad1
	case 1:
		return bad2
	case 2, 3:
		return other
	}
	return valid
}

func (g *generator) address(v6 bool) corev1.EndpointAddress {
	a := corev1.EndpointAddress{IP: g.ip(v6)}
	if g.chance(3) {
		a.Hostname = g.mostly("web-0", labels...)
	}
	if g.chance(2) {
		a.NodeName = g.maybe(nodes...)
	}
	if g.chance(3) {
		a.TargetRef = &corev1.ObjectReference{Kind: g.pick("Pod", "", "bad kind!"), Name: g.pick("web-0", "", "Bad_Name"), Namespace: "default"}
	}
	return a
}

func (g *generator) slice() *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: g.meta("web-abc"),
		AddressType: discoveryv1.AddressType(g.mostly(g.pick("IPv4", "IPv6", "FQDN"), "", "Bogus", "ipv4"))}
	n := g.rng.Intn(4)
	if g.chance(150) {
		n = 1001
	}
	for range n {
		s.Endpoints = append(s.Endpoints, g.sliceEndpoint(s.AddressType))
	}
	for range g.rng.Intn(4) {
		p := discoveryv1.EndpointPort{Name: g.maybe(portNames...), Protocol: (*corev1.Protocol)(g.maybe(protocols...)), AppProtocol: nil}
		if g.chance(2) {
			port := int32(g.pick4(80, 8080, 0, 65536))
			p.Port = &port
		}
		if g.chance(3) {
			p.AppProtocol = g.maybe(appProtos...)
		}
		s.Ports = append(s.Ports, p)
	}
	return s
}

func (g *generator) sliceEndpoint(t discoveryv1.AddressType) discoveryv1.Endpoint {
	var ep discoveryv1.Endpoint
	n := g.rng.Intn(3) + 1
	if g.chance(8) {
		n = 0
	}
	if g.chance(100) {
		n = 101
	}
	for range n {
		if t == discoveryv1.AddressTypeFQDN || g.chance(10) {
			ep.Addresses = append(ep.Addresses, g.mostly(fqdns[0], fqdns...))
		} else {
			ep.Addresses = append(ep.Addresses, g.ip(t == discoveryv1.AddressTypeIPv6))
		}
	}
	if g.chance(2) {
		b := func() *bool {
			if g.chance(3) {
				return nil
			}
			v := g.chance(2)
			return &v
		}
		ep.Conditions = discoveryv1.EndpointConditions{Ready: b(), Serving: b(), Terminating: b()}
	}
	if g.chance(3) {
		ep.Hostname = g.maybe(labels...)
	}
	if g.chance(2) {
		ep.NodeName = g.maybe(nodes...)
	}
	if g.chance(3) {
		ep.Zone = g.maybe(zones...)
	}
	if g.chance(3) {
		ep.Hints = g.hints()
	}
	if g.chance(6) {
		ep.DeprecatedTopology = map[string]string{g.mostly(corev1.LabelHostname, topoKeys...): g.mostly("node-1", nodes...)}
		if g.chance(8) {
			for i := range 17 {
				ep.DeprecatedTopology[fmt.Sprintf("k%d", i)] = "v"
			}
		}
	}
	if g.chance(4) {
		ep.TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: g.pick("web-0", "Bad_Name")}
	}
	return ep
}

func (g *generator) hints() *discoveryv1.EndpointHints {
	h := &discoveryv1.EndpointHints{}
	n := g.rng.Intn(3)
	if g.chance(10) {
		n = 9
	}
	for range n {
		h.ForZones = append(h.ForZones, discoveryv1.ForZone{Name: g.mostly("zone-a", zones...)})
	}
	n = g.rng.Intn(3)
	if g.chance(10) {
		n = 9
	}
	for range n {
		h.ForNodes = append(h.ForNodes, discoveryv1.ForNode{Name: g.mostly("node-1", nodes...)})
	}
	return h
}

func (g *generator) serviceAccount() *corev1.ServiceAccount {
	sa := &corev1.ServiceAccount{ObjectMeta: g.meta("builder")}
	if g.chance(4) {
		if sa.Annotations == nil {
			sa.Annotations = map[string]string{}
		}
		sa.Annotations[g.mostly("kubernetes.io/enforce-mountable-secrets", "example.com/note", "bad key!")] = g.pick("true", "")
	}
	for range g.rng.Intn(3) {
		sa.Secrets = append(sa.Secrets, corev1.ObjectReference{Name: g.pick("token", "", "Bad_Name"), Namespace: g.pick("", "other"),
			Kind: g.pick("", "Secret"), UID: "u-1", FieldPath: g.pick("", "data")})
	}
	for range g.rng.Intn(3) {
		sa.ImagePullSecrets = append(sa.ImagePullSecrets, corev1.LocalObjectReference{Name: g.pick("registry", "", "Bad_Name")})
	}
	if g.chance(3) {
		v := g.chance(2)
		sa.AutomountServiceAccountToken = &v
	}
	return sa
}

// stored is an object as stored: defaulted, with a valid name and a
// resourceVersion, and otherwise whatever was allowed when it was written
// (or by an older server).
func (g *generator) stored(kind string) runtime.Object {
	obj := g.object(kind)
	m := metaOf(obj)
	m.Name = map[string]string{"Endpoints": "web", "EndpointSlice": "web-abc", "ServiceAccount": "builder"}[kind]
	m.GenerateName, m.ResourceVersion, m.Generation, m.Finalizers, m.Namespace = "", "7", 1, nil, "default"
	m.Labels = nil
	if kind == "ServiceAccount" && g.chance(3) {
		m.Annotations = map[string]string{"kubernetes.io/enforce-mountable-secrets": "true"}
	}
	legacyscheme.Scheme.Default(obj)
	return obj
}

// changed is a write over old: some fields kept, some changed.
func (g *generator) changed(old runtime.Object) runtime.Object {
	obj := old.DeepCopyObject()
	m := metaOf(obj)
	if g.chance(4) {
		m.Labels = map[string]string{"tier": g.mostly("gold", "bad value!")}
	}
	if g.chance(15) {
		m.ResourceVersion = ""
	}
	if g.chance(20) {
		m.Name = "renamed"
	}
	switch o := obj.(type) {
	case *corev1.Endpoints:
		switch g.rng.Intn(4) {
		case 0:
			o.Subsets = g.object("Endpoints").(*corev1.Endpoints).Subsets
		case 1:
			o.Subsets = append(o.Subsets, g.subset())
		case 2:
			if len(o.Subsets) > 0 {
				o.Subsets[0].Addresses = append(o.Subsets[0].Addresses, g.address(false))
			}
		}
	case *discoveryv1.EndpointSlice:
		f := g.slice()
		switch g.rng.Intn(5) {
		case 0:
			o.Endpoints = f.Endpoints
		case 1:
			o.AddressType = f.AddressType
		case 2:
			o.Ports = f.Ports
		case 3:
			for i := range o.Endpoints {
				if o.Endpoints[i].DeprecatedTopology != nil && g.chance(2) {
					o.Endpoints[i].Zone = g.maybe(zones...)
				}
			}
			if len(o.Endpoints) > 0 {
				o.Endpoints[0].NodeName = g.maybe(nodes...)
			}
		}
	case *corev1.ServiceAccount:
		f := g.serviceAccount()
		switch g.rng.Intn(3) {
		case 0:
			o.Secrets, o.ImagePullSecrets = f.Secrets, f.ImagePullSecrets
		case 1:
			o.Annotations = f.Annotations
		}
	}
	return obj
}

func metaOf(obj runtime.Object) *metav1.ObjectMeta {
	switch o := obj.(type) {
	case *corev1.Endpoints:
		return &o.ObjectMeta
	case *discoveryv1.EndpointSlice:
		return &o.ObjectMeta
	case *corev1.ServiceAccount:
		return &o.ObjectMeta
	}
	panic(fmt.Sprintf("not an endpoints object: %T", obj))
}

// nameSlicePorts gives every EndpointSlice port a name, as decoding does.
func nameSlicePorts(obj runtime.Object) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return
	}
	for i := range s.Ports {
		if s.Ports[i].Name == nil {
			s.Ports[i].Name = new(string)
		}
	}
}
