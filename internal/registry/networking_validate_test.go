package registry

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// networkingCase is a create (old nil) or an update of a networking
// object and the aggregate of the errors upstream gives it.
type networkingCase struct {
	name     string
	obj, old runtime.Object
	want     string
}

func runNetworkingCases(t *testing.T, cases []networkingCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			if tc.old == nil {
				got = aggregate(createErrors(t, tc.obj))
			} else {
				got = aggregate(updateErrors(t, tc.obj, tc.old))
			}
			if got != tc.want {
				t.Errorf("errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func ingressWith(mutate func(*networkingv1.IngressSpec)) *networkingv1.Ingress {
	in := &networkingv1.Ingress{ObjectMeta: meta1("web"), Spec: networkingv1.IngressSpec{
		Rules: []networkingv1.IngressRule{{Host: "a.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: serviceBackend("web", 80)}}}}}}}}
	if mutate != nil {
		mutate(&in.Spec)
	}
	return in
}

func serviceBackend(name string, port int32) networkingv1.IngressBackend {
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: port}}}
}

func firstPath(s *networkingv1.IngressSpec) *networkingv1.HTTPIngressPath {
	return &s.Rules[0].HTTP.Paths[0]
}

const wildcardMsg = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

// Ingress creates and updates are checked as upstream's
// ValidateIngressCreate and ValidateIngressUpdate.
func TestIngressValidation(t *testing.T) {
	badWildcardRule := ingressWith(func(s *networkingv1.IngressSpec) {
		s.Rules[0].Host = "*.example.com"
		firstPath(s).Path = "relative"
	})
	badSecret := ingressWith(func(s *networkingv1.IngressSpec) { s.TLS = []networkingv1.IngressTLS{{SecretName: "Bad_Secret"}} })
	runNetworkingCases(t, []networkingCase{
		{name: "valid", obj: ingressWith(nil)},
		{name: "no backend nor rules", obj: ingressWith(func(s *networkingv1.IngressSpec) { s.Rules = nil }),
			want: "spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"},
		{name: "default backend without port", obj: ingressWith(func(s *networkingv1.IngressSpec) {
			s.Rules, s.DefaultBackend = nil, &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web"}}
		}), want: "spec.defaultBackend: Required value: port name or number is required"},
		{name: "backend with both port name and number", obj: ingressWith(func(s *networkingv1.IngressSpec) {
			firstPath(s).Backend.Service.Port.Name = "http"
		}), want: `spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & port number`},
		{name: "no backend", obj: ingressWith(func(s *networkingv1.IngressSpec) { firstPath(s).Backend = networkingv1.IngressBackend{} }),
			want: `spec.rules[0].http.paths[0].backend: Invalid value: "": resource or service backend is required`},
		{name: "resource backend without kind", obj: ingressWith(func(s *networkingv1.IngressSpec) {
			firstPath(s).Backend = networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{Name: "a/b"}}
		}), want: `[spec.rules[0].http.paths[0].backend.resource.kind: Required value, spec.rules[0].http.paths[0].backend.resource.name: Invalid value: "a/b": may not contain '/']`},
		{name: "service name a DNS label, not DNS-1035", obj: ingressWith(func(s *networkingv1.IngressSpec) { firstPath(s).Backend.Service.Name = "1web" })},
		{name: "service name not a DNS label", obj: ingressWith(func(s *networkingv1.IngressSpec) { firstPath(s).Backend.Service.Name = "web.x" }),
			want: `spec.rules[0].http.paths[0].backend.service.name: Invalid value: "web.x": must not contain dots`},
		{name: "host an IP", obj: ingressWith(func(s *networkingv1.IngressSpec) { s.Rules[0].Host = "1.2.3.4" }),
			want: `spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address`},
		{name: "host not DNS", obj: ingressWith(func(s *networkingv1.IngressSpec) { s.Rules[0].Host = "Bad_Host" }),
			want: `spec.rules[0].host: Invalid value: "Bad_Host": ` + dnsSubdomainMsg},
		{name: "bad wildcard host", obj: ingressWith(func(s *networkingv1.IngressSpec) { s.Rules[0].Host = "a.*.example.com" }),
			want: `spec.rules[0].host: Invalid value: "a.*.example.com": ` + wildcardMsg},
		{name: "unknown pathType", obj: ingressWith(func(s *networkingv1.IngressSpec) { firstPath(s).PathType = ptr.To(networkingv1.PathType("Bogus")) }),
			want: `spec.rules[0].http.paths[0].pathType: Unsupported value: "Bogus": supported values: "Exact", "ImplementationSpecific", "Prefix"`},
		{name: "no pathType", obj: ingressWith(func(s *networkingv1.IngressSpec) { firstPath(s).PathType = nil }),
			want: "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"},
		{name: "bad prefix path", obj: ingressWith(func(s *networkingv1.IngressSpec) { firstPath(s).Path = "a//b/.." }),
			want: `[spec.rules[0].http.paths[0].path: Invalid value: "a//b/..": must be an absolute path, spec.rules[0].http.paths[0].path: Invalid value: "a//b/..": must not contain '//', spec.rules[0].http.paths[0].path: Invalid value: "a//b/..": cannot end with '/..']`},
		{name: "implementation specific relative path", obj: ingressWith(func(s *networkingv1.IngressSpec) {
			firstPath(s).Path, firstPath(s).PathType = "x", ptr.To(networkingv1.PathTypeImplementationSpecific)
		}), want: `spec.rules[0].http.paths[0].path: Invalid value: "x": must be an absolute path`},
		{name: "http without paths", obj: ingressWith(func(s *networkingv1.IngressSpec) { s.Rules[0].HTTP.Paths = nil }),
			want: "spec.rules[0].http.paths: Required value"},
		{name: "TLS hosts and secret", obj: ingressWith(func(s *networkingv1.IngressSpec) {
			s.TLS = []networkingv1.IngressTLS{{Hosts: []string{"*.example.com", "*", "Bad"}, SecretName: "Bad_Secret"}}
		}), want: `[spec.tls[0].hosts[1]: Invalid value: "*": ` + wildcardMsg + `, spec.tls[0].hosts[2]: Invalid value: "Bad": ` + dnsSubdomainMsg +
			`, spec.tls[0].secretName: Invalid value: "Bad_Secret": ` + dnsSubdomainMsg + `]`},
		{name: "bad ingressClassName", obj: ingressWith(func(s *networkingv1.IngressSpec) { s.IngressClassName = ptr.To("Bad") }),
			want: `spec.ingressClassName: Invalid value: "Bad": ` + dnsSubdomainMsg},
		{name: "class annotation disagrees", obj: func() runtime.Object {
			in := ingressWith(func(s *networkingv1.IngressSpec) { s.IngressClassName = ptr.To("nginx") })
			in.Annotations = map[string]string{ingressClassAnnotation: "traefik"}
			return in
		}(), want: `annotations.kubernetes.io/ingress.class: Invalid value: "traefik": must match ` + "`ingressClassName`" + ` when both are specified`},
		{name: "update: class annotation not checked", obj: func() runtime.Object {
			in := ingressWith(func(s *networkingv1.IngressSpec) { s.IngressClassName = ptr.To("nginx") })
			in.Annotations = map[string]string{ingressClassAnnotation: "traefik"}
			return in
		}(), old: ingressWith(nil)},
		// Recorded from kube-apiserver 1.37.2 (POST, 422): every kind of
		// mistake at once, in upstream's order.
		{name: "many mistakes", obj: func() runtime.Object {
			in := ingressWith(func(s *networkingv1.IngressSpec) {
				s.IngressClassName = ptr.To("n")
				s.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web"}}
				s.TLS = []networkingv1.IngressTLS{{Hosts: []string{"*"}, SecretName: "Bad_S"}}
				s.Rules[0].Host = "1.2.3.4"
				firstPath(s).Path, firstPath(s).PathType, firstPath(s).Backend.Service.Name = "a//b", ptr.To(networkingv1.PathType("Bogus")), "web.x"
			})
			in.Annotations = map[string]string{ingressClassAnnotation: "t"}
			return in
		}(), want: "[spec.defaultBackend: Required value: port name or number is required, " +
			`spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address, ` +
			`spec.rules[0].http.paths[0].pathType: Unsupported value: "Bogus": supported values: "Exact", "ImplementationSpecific", "Prefix", ` +
			`spec.rules[0].http.paths[0].backend.service.name: Invalid value: "web.x": must not contain dots, ` +
			`spec.tls[0].hosts[0]: Invalid value: "*": ` + wildcardMsg + `, spec.tls[0].secretName: Invalid value: "Bad_S": ` + dnsSubdomainMsg +
			`, annotations.kubernetes.io/ingress.class: Invalid value: "t": must match ` + "`ingressClassName`" + ` when both are specified]`},
		{name: "update: stored invalid wildcard rule kept", obj: badWildcardRule.DeepCopy(), old: badWildcardRule},
		{name: "update: invalid wildcard rule new", obj: badWildcardRule.DeepCopy(), old: ingressWith(nil),
			want: `spec.rules[0].http.paths[0].path: Invalid value: "relative": must be an absolute path`},
		{name: "update: stored invalid secret name kept", obj: badSecret.DeepCopy(), old: badSecret},
		{name: "update: invalid secret name new", obj: badSecret.DeepCopy(), old: ingressWith(nil),
			want: `spec.tls[0].secretName: Invalid value: "Bad_Secret": ` + dnsSubdomainMsg},
	})
}

// An ingresses/status write checks load balancer IPs (strict, but for
// those already stored) and hostnames, and not the stored spec.
func TestIngressStatusValidation(t *testing.T) {
	withStatus := func(points ...networkingv1.IngressLoadBalancerIngress) *networkingv1.Ingress {
		in := ingressWith(func(s *networkingv1.IngressSpec) { s.Rules = nil })
		in.Status.LoadBalancer.Ingress = points
		return in
	}
	for _, tc := range []struct {
		name     string
		obj, old *networkingv1.Ingress
		want     string
	}{
		{"valid, spec not checked", withStatus(networkingv1.IngressLoadBalancerIngress{IP: "1.2.3.4"}, networkingv1.IngressLoadBalancerIngress{Hostname: "lb.example.com"}), withStatus(), ""},
		{"not an IP", withStatus(networkingv1.IngressLoadBalancerIngress{IP: "nope"}), withStatus(),
			`status.loadBalancer.ingress[0].ip: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`},
		{"leading zeros", withStatus(networkingv1.IngressLoadBalancerIngress{IP: "01.2.3.4"}), withStatus(),
			`status.loadBalancer.ingress[0].ip: Invalid value: "01.2.3.4": must not have leading 0s`},
		{"leading zeros already stored", withStatus(networkingv1.IngressLoadBalancerIngress{IP: "01.2.3.4"}), withStatus(networkingv1.IngressLoadBalancerIngress{IP: "01.2.3.4"}), ""},
		{"hostname an IP", withStatus(networkingv1.IngressLoadBalancerIngress{Hostname: "1.2.3.4"}), withStatus(),
			`status.loadBalancer.ingress[0].hostname: Invalid value: "1.2.3.4": must be a DNS name, not an IP address`},
		{"hostname not DNS", withStatus(networkingv1.IngressLoadBalancerIngress{Hostname: "Bad_Host"}), withStatus(),
			`status.loadBalancer.ingress[0].hostname: Invalid value: "Bad_Host": ` + dnsSubdomainMsg},
	} {
		r := resourceFor(t, tc.obj)
		obj := PrepareForUpdate(r, "status", tc.obj, tc.old)
		if got := aggregate(r.ValidateSubresourceChange("status", obj, tc.old)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func ingressClass(controller string, params *networkingv1.IngressClassParametersReference) *networkingv1.IngressClass {
	return &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx", ResourceVersion: "1"},
		Spec: networkingv1.IngressClassSpec{Controller: controller, Parameters: params}}
}

// IngressClass creates and updates are checked as upstream's
// ValidateIngressClass and ValidateIngressClassUpdate, with 1.37's beta
// declarative rules for the parameters' kind and name.
func TestIngressClassValidation(t *testing.T) {
	ns := networkingv1.IngressClassParametersReferenceScopeNamespace
	params := func(kind, name, scope string, namespace *string) *networkingv1.IngressClassParametersReference {
		return &networkingv1.IngressClassParametersReference{APIGroup: ptr.To("k8s.example.com"), Kind: kind, Name: name, Scope: ptr.To(scope), Namespace: namespace}
	}
	runNetworkingCases(t, []networkingCase{
		{name: "valid", obj: ingressClass("example.com/ingress", params("Params", "p", ns, ptr.To("default")))},
		{name: "controller not domain-prefixed", obj: ingressClass("nginx", nil),
			want: `spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")`},
		{name: "controller too long", obj: ingressClass("example.com/"+strings.Repeat("a", 250), nil),
			want: "spec.controller: Too long: may not be more than 250 bytes"},
		{name: "namespace scope without namespace", obj: ingressClass("example.com/i", params("Params", "p", ns, nil)),
			want: "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"},
		{name: "cluster scope with namespace", obj: ingressClass("example.com/i", params("Params", "p", "Cluster", ptr.To("default"))),
			want: "spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"},
		{name: "unknown scope", obj: ingressClass("example.com/i", params("Params", "p", "World", nil)),
			want: `spec.parameters.scope: Unsupported value: "World": supported values: "Cluster", "Namespace"`},
		// Recorded from kube-apiserver 1.37.2 (POST, 422).
		{name: "kind and name required, declarative errors last", obj: ingressClass("example.com/i", params("", "", "World", nil)),
			want: `[spec.parameters.scope: Unsupported value: "World": supported values: "Cluster", "Namespace", spec.parameters.kind: Required value, spec.parameters.name: Required value]`},
		{name: "update: controller immutable", obj: ingressClass("example.com/b", nil), old: ingressClass("example.com/a", nil),
			want: `spec.controller: Invalid value: "example.com/b": field is immutable`},
		{name: "update: bad namespace", obj: ingressClass("example.com/a", params("Params", "p", ns, ptr.To("Bad"))), old: ingressClass("example.com/a", nil),
			want: `spec.parameters.namespace: Invalid value: "Bad": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
	})
}

func networkPolicy(spec networkingv1.NetworkPolicySpec) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{ObjectMeta: meta1("np"), Spec: spec}
}

func ipBlockRule(cidr string, except ...string) networkingv1.NetworkPolicySpec {
	return networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
		From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}}}}}
}

func portRule(ports ...networkingv1.NetworkPolicyPort) networkingv1.NetworkPolicySpec {
	return networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: ports}}}
}

// NetworkPolicy creates and updates are checked as upstream's
// ValidateNetworkPolicy and ValidateNetworkPolicyUpdate, with 1.37's beta
// declarative rule requiring an ipBlock's cidr.
func TestNetworkPolicyValidation(t *testing.T) {
	port := func(p intstr.IntOrString) *intstr.IntOrString { return &p }
	badLabel := networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"bad value!"}}}}}
	runNetworkingCases(t, []networkingCase{
		{name: "valid", obj: networkPolicy(ipBlockRule("10.0.0.0/8", "10.1.0.0/16"))},
		{name: "bad cidr", obj: networkPolicy(ipBlockRule("10.0.0.0/33")),
			want: `spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`},
		{name: "leading zeros", obj: networkPolicy(ipBlockRule("010.0.0.0/8")),
			want: `spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "010.0.0.0/8": must not have leading 0s in IP or prefix length`},
		{name: "update: leading zeros already stored", obj: networkPolicy(ipBlockRule("010.0.0.0/8")), old: networkPolicy(ipBlockRule("010.0.0.0/8"))},
		{name: "except not inside", obj: networkPolicy(ipBlockRule("10.0.0.0/16", "10.0.0.0/16", "11.0.0.0/24")),
			want: `[spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.0.0.0/16": must be a strict subset of ` + "`cidr`" +
				`, spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: "11.0.0.0/24": must be a strict subset of ` + "`cidr`]"},
		// Recorded from kube-apiserver 1.37.2 (POST, 422).
		{name: "empty cidr: declarative error last", obj: networkPolicy(networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{}}, {}}}}}),
			want: "[spec.ingress[0].from[1]: Required value: must specify a peer, spec.ingress[0].from[0].ipBlock.cidr: Required value]"},
		{name: "ipBlock and selector", obj: networkPolicy(networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}, PodSelector: &metav1.LabelSelector{}}}}}}),
			want: "spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer"},
		{name: "endPort below port", obj: networkPolicy(portRule(networkingv1.NetworkPolicyPort{Port: port(intstr.FromInt32(80)), EndPort: ptr.To[int32](79)})),
			want: "spec.egress[0].ports[0].endPort: Invalid value: 79: must be greater than or equal to `port`"},
		{name: "endPort with named port", obj: networkPolicy(portRule(networkingv1.NetworkPolicyPort{Port: port(intstr.FromString("http")), EndPort: ptr.To[int32](90)})),
			want: "spec.egress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric"},
		{name: "endPort without port", obj: networkPolicy(portRule(networkingv1.NetworkPolicyPort{EndPort: ptr.To[int32](90)})),
			want: "spec.egress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is not specified"},
		{name: "bad port and protocol", obj: networkPolicy(portRule(networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.Protocol("ICMP")), Port: port(intstr.FromInt32(70000))})),
			want: `[spec.egress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP", spec.egress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive]`},
		{name: "unknown policyType", obj: networkPolicy(networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Sideways"}}),
			want: `spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"`},
		{name: "too many policyTypes", obj: networkPolicy(networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Ingress", "Egress", "Ingress"}}),
			want: `spec.policyTypes: Invalid value: ["Ingress","Egress","Ingress"]: may not specify more than two policyTypes`},
		{name: "bad label value", obj: networkPolicy(badLabel),
			want: `spec.podSelector.matchExpressions[0].values[0]: Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		// Recorded from kube-apiserver 1.37.2 (POST, 422).
		{name: "leading zeros, except outside, too many policyTypes", obj: func() runtime.Object {
			np := networkPolicy(ipBlockRule("010.0.0.0/8", "11.0.0.0/24"))
			np.Spec.PolicyTypes = []networkingv1.PolicyType{"Ingress", "Egress", "Ingress"}
			return np
		}(), want: `[spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "010.0.0.0/8": must not have leading 0s in IP or prefix length, ` +
			`spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "11.0.0.0/24": must be a strict subset of ` + "`cidr`" +
			`, spec.policyTypes: Invalid value: ["Ingress","Egress","Ingress"]: may not specify more than two policyTypes]`},
		{name: "update: stored bad label value kept", obj: networkPolicy(badLabel), old: networkPolicy(badLabel)},
	})
}

// As upstream's strategies: an Ingress is created with an empty status,
// and an IngressClass's generation starts at 1 and grows with its spec.
func TestIngressPreparation(t *testing.T) {
	in := ingressWith(nil)
	in.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "1.2.3.4"}}
	PrepareForCreate(resourceFor(t, in), in)
	if len(in.Status.LoadBalancer.Ingress) != 0 {
		t.Errorf("Ingress create kept status %v, want it empty", in.Status)
	}
	ic := ingressClass("example.com/a", nil)
	r := resourceFor(t, ic)
	PrepareForCreate(r, ic)
	if ic.Generation != 1 {
		t.Errorf("IngressClass created with generation %d, want 1", ic.Generation)
	}
	next := ic.DeepCopy()
	next.Spec.Parameters = &networkingv1.IngressClassParametersReference{Kind: "K", Name: "n"}
	if got := PrepareForUpdate(r, "", next, ic).(*networkingv1.IngressClass).Generation; got != 2 {
		t.Errorf("IngressClass spec change: generation %d, want 2", got)
	}
}
