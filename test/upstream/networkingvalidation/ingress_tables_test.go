package networkingvalidation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/registry"
)

// Targeted writes after the cases of upstream's TestValidateIngressUpdate,
// TestValidateIngressStatusUpdate, TestValidateIngressClassUpdate and
// TestValidateNetworkPolicyUpdate: the leniency an update takes from the
// stored object (invalid TLS Secret names, invalid wildcard-host rules,
// Service names that are DNS labels, selector label values, stored CIDRs
// and load balancer IPs), and the declarative rules' ratcheting.

func ingressOf(rules []networkingv1.IngressRule, tls ...networkingv1.IngressTLS) *networkingv1.Ingress {
	return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "1"},
		Spec: networkingv1.IngressSpec{Rules: rules, TLS: tls, DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "defaultbackend", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}
}

func hostRule(host, path, pathType, service string) networkingv1.IngressRule {
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
		Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: ptr.To(networkingv1.PathType(pathType)),
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: service, Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}
}

// ingressUpdates are old and new Ingresses by case name.
func ingressUpdates() map[string][2]*networkingv1.Ingress {
	good := hostRule("*.example.com", "/", "Prefix", "web")
	badPath := hostRule("*.example.com", "relative", "Prefix", "web")
	badPath2 := hostRule("*.example.com", "/a//b", "Exact", "web")
	labelService := hostRule("*.example.com", "/", "Prefix", "1web") // a DNS label, not a DNS-1035 one
	plainBad := hostRule("a.example.com", "relative", "Prefix", "web")
	secret := func(name string) networkingv1.IngressTLS {
		return networkingv1.IngressTLS{Hosts: []string{"a.example.com"}, SecretName: name}
	}
	rules := func(r ...networkingv1.IngressRule) []networkingv1.IngressRule { return r }
	return map[string][2]*networkingv1.Ingress{
		"valid secret to invalid":                {ingressOf(nil, secret("tls")), ingressOf(nil, secret("Bad_Secret"))},
		"invalid secret to invalid":              {ingressOf(nil, secret("Bad_Secret")), ingressOf(nil, secret("a/b"))},
		"invalid secret kept, bad host added":    {ingressOf(nil, secret("Bad_Secret")), ingressOf(nil, secret("Bad_Secret"), networkingv1.IngressTLS{Hosts: []string{"Bad"}})},
		"valid wildcard rules to invalid":        {ingressOf(rules(good)), ingressOf(rules(badPath))},
		"invalid wildcard rules to invalid":      {ingressOf(rules(badPath)), ingressOf(rules(badPath2))},
		"invalid wildcard rules, plain invalid":  {ingressOf(rules(badPath)), ingressOf(rules(badPath, plainBad))},
		"wildcard rule with a DNS label service": {ingressOf(rules(labelService)), ingressOf(rules(badPath))},
		"class annotation disagrees on update": {ingressOf(nil), func() *networkingv1.Ingress {
			in := ingressOf(nil)
			in.Annotations = map[string]string{"kubernetes.io/ingress.class": "a"}
			in.Spec.IngressClassName = ptr.To("b")
			return in
		}()},
		"resource backend to none": {func() *networkingv1.Ingress {
			in := ingressOf(nil)
			in.Spec.DefaultBackend = &networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr.To("example.com"), Kind: "foo", Name: "bar"}}
			return in
		}(), ingressOf(nil)},
	}
}

func ingressStatusUpdates() map[string][2][]networkingv1.IngressLoadBalancerIngress {
	lb := func(ip, host string) []networkingv1.IngressLoadBalancerIngress {
		return []networkingv1.IngressLoadBalancerIngress{{IP: ip, Hostname: host}}
	}
	return map[string][2][]networkingv1.IngressLoadBalancerIngress{
		"valid":                  {nil, lb("1.2.3.4", "lb.example.com")},
		"bad IP":                 {nil, lb("1.2.3", "")},
		"leading zeros new":      {nil, lb("01.2.3.4", "")},
		"leading zeros stored":   {lb("01.2.3.4", ""), lb("01.2.3.4", "")},
		"mapped new":             {lb("1.2.3.4", ""), lb("::ffff:1.2.3.4", "")},
		"hostname an IP":         {nil, lb("", "1.2.3.4")},
		"hostname not DNS":       {nil, lb("", "Bad_Host")},
		"hostname wildcard":      {nil, lb("", "*.example.com")},
		"leading zeros replaced": {lb("01.2.3.4", ""), lb("02.2.3.4", "")},
	}
}

func ingressClassOf(controller string, params *networkingv1.IngressClassParametersReference) *networkingv1.IngressClass {
	return &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx", ResourceVersion: "1"},
		Spec: networkingv1.IngressClassSpec{Controller: controller, Parameters: params}}
}

func classUpdates() map[string][2]*networkingv1.IngressClass {
	params := func(kind, name string) *networkingv1.IngressClassParametersReference {
		return &networkingv1.IngressClassParametersReference{APIGroup: ptr.To("example.com"), Kind: kind, Name: name, Scope: ptr.To("Cluster")}
	}
	return map[string][2]*networkingv1.IngressClass{
		"controller changed":            {ingressClassOf("example.com/a", nil), ingressClassOf("example.com/b", nil)},
		"parameters added":              {ingressClassOf("example.com/a", nil), ingressClassOf("example.com/a", params("K", "n"))},
		"parameters kind emptied":       {ingressClassOf("example.com/a", params("K", "n")), ingressClassOf("example.com/a", params("", "n"))},
		"empty kind kept, name changed": {ingressClassOf("example.com/a", params("", "n")), ingressClassOf("example.com/a", params("", "m"))},
		"empty kind kept, unchanged":    {ingressClassOf("example.com/a", params("", "")), ingressClassOf("example.com/a", params("", ""))},
		"bad controller kept":           {ingressClassOf("nginx", nil), ingressClassOf("nginx", params("K", "n"))},
	}
}

func policyOf(sel metav1.LabelSelector, cidr string, except ...string) *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: "default", ResourceVersion: "1"},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: sel}}
	if cidr != "-" {
		np.Spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}}}}
	}
	return np
}

func policyUpdates() map[string][2]*networkingv1.NetworkPolicy {
	none := metav1.LabelSelector{}
	badValue := metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "In", Values: []string{"bad value!"}}}}
	return map[string][2]*networkingv1.NetworkPolicy{
		"fix a stored invalid CIDR":   {policyOf(none, "192.168.0.0/16", "192.168.2.0/24", "192.168.3.1/24"), policyOf(none, "192.168.0.0/16", "192.168.2.0/24", "192.168.3.0/24")},
		"keep a stored invalid CIDR":  {policyOf(none, "192.168.0.0/16", "192.168.3.1/24"), policyOf(none, "192.168.0.0/16", "192.168.3.1/24", "192.168.4.0/24")},
		"add a new invalid CIDR":      {policyOf(none, "192.168.0.0/16"), policyOf(none, "192.168.0.0/16", "192.168.3.1/24")},
		"leading zeros stored":        {policyOf(none, "010.0.0.0/8"), policyOf(none, "010.0.0.0/8", "10.1.0.0/16")},
		"leading zeros new":           {policyOf(none, "10.0.0.0/8"), policyOf(none, "010.0.0.0/8")},
		"stored cidr moved to except": {policyOf(none, "010.0.0.0/8"), policyOf(none, "0.0.0.0/0", "010.0.0.0/8")},
		"bad label value stored":      {policyOf(badValue, "-"), policyOf(badValue, "10.0.0.0/8")},
		"bad label value new":         {policyOf(none, "-"), policyOf(badValue, "-")},
		"bad label value stored, peer": {policyOf(badValue, "-"), func() *networkingv1.NetworkPolicy {
			np := policyOf(badValue, "-")
			np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &badValue}}}}
			return np
		}()},
		"empty cidr new": {policyOf(none, "10.0.0.0/8"), policyOf(none, "")},
		"empty cidr, ingress rules unchanged": {policyOf(none, ""), func() *networkingv1.NetworkPolicy {
			np := policyOf(none, "")
			np.Spec.PolicyTypes = []networkingv1.PolicyType{"Ingress"}
			return np
		}()},
	}
}

func TestTrafficUpdateTables(t *testing.T) {
	cat := registry.NewCatalogue()
	var c tally
	run := func(name string, old, obj runtime.Object, status bool) {
		compare(t, cat, write{Name: name, Obj: obj, Old: old, Status: status, Defaulted: true}, &c)
		compare(t, cat, write{Name: name + " (create)", Obj: obj.DeepCopyObject(), Defaulted: true}, &c)
	}
	for name, pair := range ingressUpdates() {
		run("ingress update: "+name, pair[0], pair[1], false)
	}
	for name, pair := range ingressStatusUpdates() {
		old, obj := ingressOf(nil), ingressOf(nil)
		old.Status.LoadBalancer.Ingress, obj.Status.LoadBalancer.Ingress = pair[0], pair[1]
		obj.Spec.DefaultBackend = nil // the spec sent through /status is not the stored one, and not checked
		run("ingress status: "+name, old, obj, true)
	}
	for name, pair := range classUpdates() {
		run("ingressclass update: "+name, pair[0], pair[1], false)
	}
	for name, pair := range policyUpdates() {
		run("networkpolicy update: "+name, pair[0], pair[1], false)
	}
	t.Log(c.String())
}
