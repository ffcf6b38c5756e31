package networkingvalidation

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// Generated creates, updates and (for Ingresses) status writes of the
// kinds that route traffic: Ingress, IngressClass and NetworkPolicy.

var trafficKinds = []string{"Ingress", "IngressClass", "NetworkPolicy"}

func TestGeneratedTrafficKinds(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	for ki, kind := range trafficKinds {
		g := &generator{rng: rand.New(rand.NewSource(int64(ki + 100)))}
		for i := range writesPerKind {
			w := write{Name: fmt.Sprintf("%s #%d create", kind, i), Defaulted: !g.chance(8)}
			switch g.rng.Intn(3) {
			case 0:
				w.Obj = g.trafficObject(kind)
			case 1:
				w.Old = g.storedTraffic(kind)
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update", kind, i), g.changedTraffic(kind, w.Old), true
			default: // a status write of an Ingress, another update of the others
				w.Old = g.storedTraffic(kind)
				w.Status = kind == "Ingress"
				w.Name, w.Obj, w.Defaulted = fmt.Sprintf("%s #%d update (status %v)", kind, i, w.Status), g.changedTraffic(kind, w.Old), true
			}
			compare(t, cat, w, &c)
		}
	}
	t.Log(c.String())
	if c.Refused < len(trafficKinds)*writesPerKind/4 || c.Accepted < len(trafficKinds)*writesPerKind/8 {
		t.Errorf("generated writes are too one-sided: %s", c.String())
	}
}

var (
	hosts      = []string{"a.example.com", "*.example.com", "", "1.2.3.4", "Bad_Host", "a.*.example.com", "*", "foo..bar", strings.Repeat("h", 64) + ".com"}
	paths      = []string{"/", "/api", "", "relative", "/a//b", "/a/./b", "/a/../b", "/a%2fb", "/a/..", "/a/.", "/%2F"}
	pathTypes  = []string{"Prefix", "Exact", "ImplementationSpecific", "Bogus", ""}
	names      = []string{"web", "1web", "web.x", "Web", "", "a-b", strings.Repeat("w", 64)}
	portNames  = []string{"http", "", "Bad_Name", "toolongportname1", "-x"}
	lbIPs      = []string{"1.2.3.4", "fd00::1", "01.2.3.4", "::ffff:1.2.3.4", "nope", "", "10.0.0.256"}
	lbHosts    = []string{"lb.example.com", "", "1.2.3.4", "Bad_Host", "*.example.com"}
	npCIDRs    = []string{"10.0.0.0/8", "10.0.0.0/16", "10.1.0.0/16", "10.0.0.0/24", "fd00::/64", "fd00::/96", "010.0.0.0/8", "10.0.0.1/8", "::ffff:10.0.0.0/104", "nope", "", "10.0.0.0/33"}
	labelVals  = []string{"web", "bad value!", "", strings.Repeat("v", 64)}
	protocols  = []string{"TCP", "UDP", "SCTP", "ICMP", ""}
	controller = []string{"example.com/ingress", "nginx", "", "example.com/" + strings.Repeat("c", 250), "Example.com/x", "example.com/a b"}
)

func (g *generator) trafficObject(kind string) runtime.Object {
	m := g.meta("web", []string{"", "Bad_Name", "a/b"})
	switch kind {
	case "Ingress":
		m.Namespace = "default"
		in := &networkingv1.Ingress{ObjectMeta: m, Spec: g.ingressSpec()}
		if g.chance(5) {
			in.Annotations = map[string]string{"kubernetes.io/ingress.class": g.pick("nginx", "traefik")}
		}
		if g.chance(3) {
			in.Status = g.ingressStatus()
		}
		return in
	case "IngressClass":
		m.Namespace = ""
		return &networkingv1.IngressClass{ObjectMeta: m, Spec: networkingv1.IngressClassSpec{Controller: g.mostly("example.com/ingress", controller...), Parameters: g.ingressClassParameters()}}
	}
	m.Namespace = "default"
	return &networkingv1.NetworkPolicy{ObjectMeta: m, Spec: g.networkPolicySpec()}
}

func (g *generator) ingressSpec() networkingv1.IngressSpec {
	var spec networkingv1.IngressSpec
	if g.chance(3) {
		spec.DefaultBackend = g.ingressBackend()
	}
	for range g.rng.Intn(3) {
		rule := networkingv1.IngressRule{Host: g.mostly("a.example.com", hosts...)}
		if !g.chance(6) {
			rule.HTTP = &networkingv1.HTTPIngressRuleValue{}
			for range g.rng.Intn(3) {
				p := networkingv1.HTTPIngressPath{Path: g.mostly("/", paths...), Backend: *g.ingressBackend()}
				if pt := g.mostly("Prefix", pathTypes...); pt != "" {
					p.PathType = ptr.To(networkingv1.PathType(pt))
				}
				rule.HTTP.Paths = append(rule.HTTP.Paths, p)
			}
		}
		spec.Rules = append(spec.Rules, rule)
	}
	for range g.rng.Intn(2) {
		spec.TLS = append(spec.TLS, networkingv1.IngressTLS{Hosts: []string{g.mostly("a.example.com", hosts...)}, SecretName: g.mostly("tls", "", "Bad_Secret", "a/b")})
	}
	if g.chance(3) {
		spec.IngressClassName = ptr.To(g.mostly("nginx", "traefik", "Bad", ""))
	}
	return spec
}

func (g *generator) ingressBackend() *networkingv1.IngressBackend {
	switch g.rng.Intn(8) {
	case 0:
		return &networkingv1.IngressBackend{}
	case 1:
		return &networkingv1.IngressBackend{Resource: g.resourceRef()}
	case 2:
		return &networkingv1.IngressBackend{Resource: g.resourceRef(), Service: &networkingv1.IngressServiceBackend{Name: "web"}}
	}
	svc := &networkingv1.IngressServiceBackend{Name: g.mostly("web", names...)}
	switch g.rng.Intn(5) {
	case 0:
		svc.Port.Name = g.mostly("http", portNames...)
	case 1:
		svc.Port = networkingv1.ServiceBackendPort{Name: "http", Number: 80}
	case 2:
		svc.Port.Number = int32(g.pick2(80, 0, 70000, -1))
	default:
		svc.Port.Number = 80
	}
	return &networkingv1.IngressBackend{Service: svc}
}

func (g *generator) pick2(options ...int) int { return options[g.rng.Intn(len(options))] }

func (g *generator) resourceRef() *corev1.TypedLocalObjectReference {
	ref := &corev1.TypedLocalObjectReference{Kind: g.mostly("Bucket", segments...), Name: g.mostly("static", segments...)}
	if g.chance(2) {
		ref.APIGroup = ptr.To(g.mostly("k8s.example.com", "Bad_Group", ""))
	}
	return ref
}

func (g *generator) ingressStatus() networkingv1.IngressStatus {
	var st networkingv1.IngressStatus
	for range g.rng.Intn(3) {
		st.LoadBalancer.Ingress = append(st.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{IP: g.mostly("1.2.3.4", lbIPs...), Hostname: g.mostly("", lbHosts...)})
	}
	return st
}

func (g *generator) ingressClassParameters() *networkingv1.IngressClassParametersReference {
	if g.chance(3) {
		return nil
	}
	p := &networkingv1.IngressClassParametersReference{Kind: g.mostly("Params", segments...), Name: g.mostly("p", segments...)}
	if g.chance(2) {
		p.APIGroup = ptr.To(g.mostly("k8s.example.com", "Bad_Group", ""))
	}
	if !g.chance(4) {
		p.Scope = ptr.To(g.mostly("Cluster", "Namespace", "World", ""))
	}
	if g.chance(2) {
		p.Namespace = ptr.To(g.mostly("default", "Bad", "", "a.b"))
	}
	return p
}

func (g *generator) networkPolicySpec() networkingv1.NetworkPolicySpec {
	spec := networkingv1.NetworkPolicySpec{PodSelector: g.selector()}
	for range g.rng.Intn(3) {
		spec.Ingress = append(spec.Ingress, networkingv1.NetworkPolicyIngressRule{Ports: g.policyPorts(), From: g.peers()})
	}
	for range g.rng.Intn(3) {
		spec.Egress = append(spec.Egress, networkingv1.NetworkPolicyEgressRule{Ports: g.policyPorts(), To: g.peers()})
	}
	if g.chance(3) {
		for range g.rng.Intn(4) {
			spec.PolicyTypes = append(spec.PolicyTypes, networkingv1.PolicyType(g.mostly("Ingress", "Egress", "Sideways")))
		}
	}
	return spec
}

func (g *generator) selector() metav1.LabelSelector {
	var sel metav1.LabelSelector
	if g.chance(3) {
		sel.MatchLabels = map[string]string{g.mostly("app", "bad key!"): g.mostly("web", labelVals...)}
	}
	if g.chance(3) {
		sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOperator(g.mostly("In", "NotIn", "Exists", "Bogus")),
			Values: []string{g.mostly("web", labelVals...)}}}
	}
	return sel
}

func (g *generator) policyPorts() []networkingv1.NetworkPolicyPort {
	var ports []networkingv1.NetworkPolicyPort
	for range g.rng.Intn(3) {
		var p networkingv1.NetworkPolicyPort
		if pr := g.mostly("TCP", protocols...); pr != "" {
			p.Protocol = ptr.To(corev1.Protocol(pr))
		}
		switch g.rng.Intn(4) {
		case 0:
			p.Port = ptr.To(intstr.FromString(g.mostly("http", portNames...)))
		case 1, 2:
			p.Port = ptr.To(intstr.FromInt32(int32(g.pick2(80, 443, 0, 70000))))
		}
		if g.chance(2) {
			p.EndPort = ptr.To(int32(g.pick2(90, 79, 443, 70000, 0)))
		}
		ports = append(ports, p)
	}
	return ports
}

func (g *generator) peers() []networkingv1.NetworkPolicyPeer {
	var peers []networkingv1.NetworkPolicyPeer
	for range g.rng.Intn(3) {
		var p networkingv1.NetworkPolicyPeer
		if g.chance(2) {
			p.IPBlock = &networkingv1.IPBlock{CIDR: g.mostly("10.0.0.0/8", npCIDRs...)}
			for range g.rng.Intn(3) {
				p.IPBlock.Except = append(p.IPBlock.Except, g.mostly("10.1.0.0/16", npCIDRs...))
			}
		}
		if g.chance(2) {
			p.PodSelector = ptr.To(g.selector())
		}
		if g.chance(3) {
			p.NamespaceSelector = ptr.To(g.selector())
		}
		peers = append(peers, p)
	}
	return peers
}

// storedTraffic is an object as stored: defaulted, with a valid name and
// a resourceVersion, and otherwise whatever was allowed when it was
// written (the generator's mistakes included, for the rules that spare
// what is already stored).
func (g *generator) storedTraffic(kind string) runtime.Object {
	obj := g.trafficObject(kind)
	m, _ := meta.Accessor(obj)
	m.SetName("web")
	m.SetGenerateName("")
	m.SetResourceVersion("7")
	m.SetGeneration(1)
	m.SetFinalizers(nil)
	m.SetAnnotations(nil)
	m.SetLabels(nil)
	legacyscheme.Scheme.Default(obj)
	return obj
}

// changedTraffic is a write over old: some fields kept, some changed
// (status included).
func (g *generator) changedTraffic(kind string, old runtime.Object) runtime.Object {
	obj := old.DeepCopyObject()
	m, _ := meta.Accessor(obj)
	if g.chance(4) {
		m.SetLabels(map[string]string{"tier": g.mostly("gold", "bad value!")})
	}
	if g.chance(15) {
		m.SetResourceVersion("")
	}
	if g.chance(20) {
		m.SetName("renamed")
	}
	fresh := g.trafficObject(kind)
	switch o := obj.(type) {
	case *networkingv1.Ingress:
		f := fresh.(*networkingv1.Ingress)
		switch g.rng.Intn(4) {
		case 0:
			o.Spec = f.Spec
		case 1:
			o.Spec.TLS, o.Spec.IngressClassName = f.Spec.TLS, f.Spec.IngressClassName
		case 2:
			o.Spec.Rules = append(o.Spec.Rules, f.Spec.Rules...)
		}
		if g.chance(2) {
			o.Status = g.ingressStatus()
		}
	case *networkingv1.IngressClass:
		f := fresh.(*networkingv1.IngressClass)
		switch g.rng.Intn(4) {
		case 0:
			o.Spec = f.Spec
		case 1:
			o.Spec.Parameters = f.Spec.Parameters
		case 2:
			if o.Spec.Parameters != nil && f.Spec.Parameters != nil {
				o.Spec.Parameters.Kind = f.Spec.Parameters.Kind
			}
		}
	case *networkingv1.NetworkPolicy:
		f := fresh.(*networkingv1.NetworkPolicy)
		switch g.rng.Intn(4) {
		case 0:
			o.Spec = f.Spec
		case 1:
			o.Spec.Egress = f.Spec.Egress
		case 2:
			o.Spec.Ingress = append(o.Spec.Ingress, f.Spec.Ingress...)
		}
	}
	return obj
}
