package kindwarnings

import (
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func kindNamed(t *testing.T, name string) kind {
	i := slices.IndexFunc(kinds, func(k kind) bool { return k.name == name })
	if i < 0 {
		t.Fatalf("no kind %q", name)
	}
	return kinds[i]
}

func om(annotations ...string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: "x", Namespace: "default", Generation: 1}
	for _, a := range annotations {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[a] = "v"
	}
	return m
}

func addresses(ips ...string) []corev1.EndpointAddress {
	var out []corev1.EndpointAddress
	for _, ip := range ips {
		out = append(out, corev1.EndpointAddress{IP: ip})
	}
	return out
}

func nodeWith(f func(s *corev1.NodeSpec)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	f(&n.Spec)
	return n
}

var configSource = &corev1.NodeConfigSource{ConfigMap: &corev1.ConfigMapNodeConfigSource{Namespace: "kube-system", Name: "c", KubeletConfigKey: "k"}}

func quota(pairs ...string) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: om(), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
	for i := 0; i+1 < len(pairs); i += 2 {
		q.Spec.Hard[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return q
}

func tlsSecret(cert, key []byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: om(), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": cert, "tls.key": key}}
}

func podIPs(pod, host string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: om(), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		Status: corev1.PodStatus{PodIP: pod, PodIPs: []corev1.PodIP{{IP: pod}}, HostIP: host, HostIPs: []corev1.HostIP{{IP: host}}}}
}

func ingressWith(class *string, lbIP string, annotations ...string) *networkingv1.Ingress {
	in := &networkingv1.Ingress{ObjectMeta: om(annotations...), Spec: networkingv1.IngressSpec{IngressClassName: class,
		DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "s", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}
	if lbIP != "" {
		in.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: lbIP}}
	}
	return in
}

func ipBlockPolicy(cidr string, except ...string) *networkingv1.NetworkPolicy {
	peer := networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}
	return &networkingv1.NetworkPolicy{ObjectMeta: om(), Spec: networkingv1.NetworkPolicySpec{
		Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}},
		Egress:  []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{peer}}}}}
}

func webhooks(name string, groups, resources []string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "a.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://example.com")},
			SideEffects:  ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
				Rule: admissionregistrationv1.Rule{APIGroups: groups, APIVersions: []string{"v1"}, Resources: resources}}}}}}
}

// warningCases are one write per warning upstream gives (old nil for a
// create), with a part of the text it must give; an empty want is a write
// that must not warn.
var warningCases = []struct {
	name, kind, want string
	obj, old         runtime.Object
}{
	{"endpoints address with leading zeros", "Endpoints", `subsets[0].addresses[1].ip: non-standard IP address "010.0.0.1" is invalid: use "10.0.0.1"`,
		&corev1.Endpoints{ObjectMeta: om(), Subsets: []corev1.EndpointSubset{{Addresses: addresses("10.0.0.2", "010.0.0.1")}}}, nil},
	{"endpoints not-ready IPv6 not canonical", "Endpoints", `subsets[0].notReadyAddresses[0].ip: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format ("2001:db8::1")`,
		&corev1.Endpoints{ObjectMeta: om(), Subsets: []corev1.EndpointSubset{{NotReadyAddresses: addresses("2001:DB8::1")}}},
		&corev1.Endpoints{ObjectMeta: om()}},
	{"endpoints of the controller", "Endpoints", "",
		&corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default", Labels: map[string]string{"endpoints.kubernetes.io/managed-by": "endpoint-controller"}},
			Subsets: []corev1.EndpointSubset{{Addresses: addresses("010.0.0.1")}}}, nil},
	{"node config source kept on update", "Node", "spec.configSource: the feature is removed",
		nodeWith(func(s *corev1.NodeSpec) { s.ConfigSource = configSource }), nodeWith(func(s *corev1.NodeSpec) { s.ConfigSource = configSource })},
	{"node config source dropped on create", "Node", "", nodeWith(func(s *corev1.NodeSpec) { s.ConfigSource = configSource }), nil},
	{"node external ID", "Node", "spec.externalID: this field is deprecated, and is unused by Kubernetes",
		nodeWith(func(s *corev1.NodeSpec) { s.DoNotUseExternalID = "e" }), nil},
	{"node pod CIDR with host bits", "Node", `spec.podCIDRs[0]: CIDR value "10.0.0.1/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.0.0.1/32"?)`,
		nodeWith(func(s *corev1.NodeSpec) { s.PodCIDR, s.PodCIDRs = "10.0.0.1/8", []string{"10.0.0.1/8"} }), nil},
	{"claim beta class annotation", "PersistentVolumeClaim", `metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead`,
		&corev1.PersistentVolumeClaim{ObjectMeta: om("volume.beta.kubernetes.io/storage-class")}, nil},
	{"claim fractional limit", "PersistentVolumeClaim", `spec.resources.limits[storage]: fractional byte value "1500m" is invalid, must be an integer`,
		&corev1.PersistentVolumeClaim{ObjectMeta: om(), Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1500m")}}}}, &corev1.PersistentVolumeClaim{ObjectMeta: om()}},
	{"quota request above limit", "ResourceQuota", "ResourceQuota requests.cpu (2) should be less than limits.cpu (1)",
		quota("requests.cpu", "2", "limits.cpu", "1"), nil},
	{"quota bare memory above limit", "ResourceQuota", "ResourceQuota memory (2Gi) should be less than limits.memory (1Gi)",
		quota("memory", "2Gi", "limits.memory", "1Gi"), nil},
	{"quota update does not warn", "ResourceQuota", "", quota("requests.cpu", "2", "limits.cpu", "1"), quota()},
	{"TLS secret whose key is another's", "Secret", "tls: private key does not match public key",
		tlsSecret(keyPairs[0].cert, keyPairs[1].key), nil},
	{"TLS secret without PEM", "Secret", "tls: failed to find any PEM data in certificate input",
		tlsSecret([]byte("x"), keyPairs[0].key), tlsSecret(keyPairs[0].cert, keyPairs[0].key)},
	{"TLS secret that matches", "Secret", "", tlsSecret(keyPairs[1].cert, keyPairs[1].key), nil},
	{"service account enforcing mountable secrets", "ServiceAccount", "metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+",
		&corev1.ServiceAccount{ObjectMeta: om("kubernetes.io/enforce-mountable-secrets")}, &corev1.ServiceAccount{ObjectMeta: om()}},
	{"service account that already enforced", "ServiceAccount", "",
		&corev1.ServiceAccount{ObjectMeta: om("kubernetes.io/enforce-mountable-secrets")}, &corev1.ServiceAccount{ObjectMeta: om("kubernetes.io/enforce-mountable-secrets")}},
	{"pod IP mapped", "pods/status", `status.podIPs[0].ip: non-standard IP address "::ffff:1.2.3.4" is invalid: use "1.2.3.4"`,
		podIPs("::ffff:1.2.3.4", "10.0.0.1"), podIPs("", "")},
	{"host IP not canonical", "pods/status", `status.hostIPs[0].ip: IPv6 address "2001:db8:0::1" should be in RFC 5952 canonical format ("2001:db8::1")`,
		podIPs("10.0.0.2", "2001:db8:0::1"), podIPs("", "")},
	{"service load-balancer IP", "services/status", `status.loadBalancer.ingress[1]: non-standard IP address "010.0.0.1" is invalid: use "10.0.0.1"`,
		&corev1.Service{ObjectMeta: om(), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{Hostname: "h"}, {IP: "010.0.0.1"}}}}},
		&corev1.Service{ObjectMeta: om(), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}}}},
	{"FQDN slice", "EndpointSlice", "spec.addressType: FQDN endpoints are deprecated",
		&discoveryv1.EndpointSlice{ObjectMeta: om(), AddressType: discoveryv1.AddressTypeFQDN}, nil},
	{"slice address not canonical", "EndpointSlice", `endpoints[0].addresses[0]: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format ("2001:db8::1")`,
		&discoveryv1.EndpointSlice{ObjectMeta: om(), AddressType: discoveryv1.AddressTypeIPv6, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"2001:DB8::1"}}}},
		&discoveryv1.EndpointSlice{ObjectMeta: om(), AddressType: discoveryv1.AddressTypeIPv6}},
	{"ingress class annotation", "Ingress", `annotation "kubernetes.io/ingress.class" is deprecated, please use 'spec.ingressClassName' instead`,
		ingressWith(nil, "", "kubernetes.io/ingress.class"), nil},
	{"ingress class annotation on update", "Ingress", "", ingressWith(nil, "", "kubernetes.io/ingress.class"), ingressWith(nil, "")},
	{"ingress load-balancer IP", "ingresses/status", `status.loadBalancer.ingress[0]: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format ("2001:db8::1")`,
		ingressWith(nil, "2001:DB8::1"), ingressWith(nil, "")},
	{"network policy exception with host bits", "NetworkPolicy", `spec.egress[0].to[0].ipBlock.except[1]: CIDR value "10.1.0.1/16" is ambiguous`,
		ipBlockPolicy("10.0.0.0/8", "10.2.0.0/16", "10.1.0.1/16"), nil},
	{"network policy CIDR with leading zeros", "NetworkPolicy", `spec.egress[0].to[0].ipBlock.cidr: non-standard CIDR value "010.0.0.0/8" is invalid: use "10.0.0.0/8"`,
		ipBlockPolicy("010.0.0.0/8"), ipBlockPolicy("10.0.0.0/8")},
	{"runtime class deprecated node label", "RuntimeClass", `scheduling.nodeSelector: deprecated since v1.14; use "kubernetes.io/os" instead`,
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Handler: "h", Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"beta.kubernetes.io/os": "linux"}}}, nil},
	{"storage class deprecated topology label", "StorageClass", `allowedTopologies[0].matchLabelExpressions[1].key: deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Provisioner: "p", AllowedTopologies: []corev1.TopologySelectorTerm{{
			MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: "a", Values: []string{"b"}}, {Key: "failure-domain.beta.kubernetes.io/zone", Values: []string{"z"}}}}}}, nil},
	{"webhook on an excluded resource", "ValidatingWebhookConfiguration", "webhooks[0].rules[0]: tokenreviews.authentication.k8s.io is excluded from admission webhooks; this rule will have no effect",
		webhooks("w", []string{"", "authentication.k8s.io"}, []string{"pods", "tokenreviews", "tokenreviews"}), nil},
	{"webhook with a wildcard", "ValidatingWebhookConfiguration", "", webhooks("w", []string{"*"}, []string{"tokenreviews"}), nil},
	{"static name on update", "ValidatingWebhookConfiguration", `metadata.name: names ending with ".static.k8s.io" are reserved for static manifest-based configurations and cannot be managed via the API`,
		webhooks("w.static.k8s.io", []string{"apps"}, []string{"deployments"}), webhooks("w.static.k8s.io", []string{"apps"}, []string{"deployments"})},
}

// TestEachWarningLikeUpstream: every write of warningCases warns as
// upstream, and upstream gives the expected warning (so the case still
// reaches it).
func TestEachWarningLikeUpstream(t *testing.T) {
	c := newComparer(t)
	for _, tc := range warningCases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			want := c.compare(kindNamed(t, tc.kind), tc.obj, tc.old)
			found := slices.ContainsFunc(want, func(w string) bool { return strings.Contains(w, tc.want) })
			if tc.want == "" && len(want) > 0 || tc.want != "" && !found {
				t.Errorf("upstream warned %q, want a warning containing %q", want, tc.want)
			}
		})
	}
}
