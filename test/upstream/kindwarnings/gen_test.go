package kindwarnings

import (
	"math/rand"

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

// gen makes objects whose fields combine what upstream's warnings look at,
// with values that do and do not warn.
type gen struct{ r *rand.Rand }

func pick[T any](r *rand.Rand, from []T) T { return from[r.Intn(len(from))] }

// some calls f between 0 and max times.
func (g gen) some(max int, f func()) {
	for i := g.r.Intn(max + 1); i > 0; i-- {
		f()
	}
}

func (g gen) maybe(f func()) {
	if g.r.Intn(2) == 0 {
		f()
	}
}

var (
	// ips and cidrs parse (sloppily): canonical, with leading zeros,
	// IPv4-mapped, upper case, with host bits.
	ips   = []string{"10.0.0.1", "10.0.0.1", "010.0.0.1", "2001:db8::1", "2001:DB8::1", "2001:db8:0::1", "::ffff:1.2.3.4"}
	cidrs = []string{"10.0.0.0/8", "10.0.0.0/8", "10.0.0.1/8", "010.0.0.0/8", "2001:db8::/32", "2001:DB8::/32", "2001:db8::1/32",
		"::ffff:10.0.0.0/104"}
	nodeLabels = []string{"beta.kubernetes.io/arch", "beta.kubernetes.io/os", "failure-domain.beta.kubernetes.io/zone",
		"node-role.kubernetes.io/master", "app.kubernetes.io/created-by", "kubernetes.io/os", "topology.kubernetes.io/zone"}
	storageSizes   = []string{"1Gi", "1.5", "1500m", "100m", "2", "0.5Ki"}
	quotaSizes     = []string{"1", "2", "500m", "1Gi", "2Gi", "1.5Gi", "1024Mi"}
	admissionNames = []string{"w", "w", "w.static.k8s.io", "static.k8s.io.w"}
)

func (g gen) meta(namespaced bool) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: "x", Generation: int64(1 + g.r.Intn(2))}
	if namespaced {
		m.Namespace = "default"
	}
	return m
}

func (g gen) label(m *metav1.ObjectMeta, key string, values ...string) {
	if g.r.Intn(3) == 0 {
		m.Labels = map[string]string{key: pick(g.r, values)}
	}
}

func (g gen) annotate(m *metav1.ObjectMeta, key string) {
	if g.r.Intn(2) == 0 {
		m.Annotations = map[string]string{key: "v", "other": "v"}
	}
}

func (g gen) endpoints() runtime.Object {
	ep := &corev1.Endpoints{ObjectMeta: g.meta(true)}
	g.label(&ep.ObjectMeta, "endpoints.kubernetes.io/managed-by", "endpoint-controller", "someone-else")
	g.some(2, func() {
		var s corev1.EndpointSubset
		g.some(3, func() { s.Addresses = append(s.Addresses, corev1.EndpointAddress{IP: pick(g.r, ips)}) })
		g.some(2, func() { s.NotReadyAddresses = append(s.NotReadyAddresses, corev1.EndpointAddress{IP: pick(g.r, ips)}) })
		s.Ports = []corev1.EndpointPort{{Port: 80, Protocol: corev1.ProtocolTCP}}
		ep.Subsets = append(ep.Subsets, s)
	})
	return ep
}

func (g gen) node() runtime.Object {
	n := &corev1.Node{ObjectMeta: g.meta(false)}
	g.maybe(func() {
		n.Spec.ConfigSource = &corev1.NodeConfigSource{ConfigMap: &corev1.ConfigMapNodeConfigSource{
			Namespace: "kube-system", Name: "c", KubeletConfigKey: "kubelet"}}
	})
	g.maybe(func() { n.Spec.DoNotUseExternalID = "ext-1" })
	g.some(2, func() { n.Spec.PodCIDRs = append(n.Spec.PodCIDRs, pick(g.r, cidrs)) })
	if len(n.Spec.PodCIDRs) > 0 {
		n.Spec.PodCIDR = n.Spec.PodCIDRs[0]
	}
	return n
}

func (g gen) storage() corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(pick(g.r, storageSizes))}
}

func (g gen) claim() runtime.Object {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: g.meta(true)}
	g.annotate(&c.ObjectMeta, "volume.beta.kubernetes.io/storage-class")
	c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	g.maybe(func() { c.Spec.Resources.Requests = g.storage() })
	g.maybe(func() { c.Spec.Resources.Limits = g.storage() })
	return c
}

func (g gen) quota() runtime.Object {
	q := &corev1.ResourceQuota{ObjectMeta: g.meta(true), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
	for _, name := range []corev1.ResourceName{"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory",
		"requests.storage", "limits.storage", "requests.ephemeral-storage", "limits.ephemeral-storage", "pods"} {
		if g.r.Intn(3) == 0 {
			q.Spec.Hard[name] = resource.MustParse(pick(g.r, quotaSizes))
		}
	}
	return q
}

func (g gen) secret() runtime.Object {
	s := &corev1.Secret{ObjectMeta: g.meta(true), Type: pick(g.r, []corev1.SecretType{corev1.SecretTypeOpaque, corev1.SecretTypeTLS})}
	s.Data = map[string][]byte{}
	if v := pick(g.r, [][]byte{keyPairs[0].cert, keyPairs[1].cert, []byte("garbage"), nil}); v != nil {
		s.Data[corev1.TLSCertKey] = v
	}
	if v := pick(g.r, [][]byte{keyPairs[0].key, keyPairs[1].key, []byte("garbage"), nil}); v != nil {
		s.Data[corev1.TLSPrivateKeyKey] = v
	}
	return s
}

func (g gen) serviceAccount() runtime.Object {
	sa := &corev1.ServiceAccount{ObjectMeta: g.meta(true)}
	g.annotate(&sa.ObjectMeta, "kubernetes.io/enforce-mountable-secrets")
	return sa
}

func (g gen) pod() runtime.Object {
	p := &corev1.Pod{ObjectMeta: g.meta(true), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	g.some(2, func() { p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: pick(g.r, ips)}) })
	g.some(2, func() { p.Status.HostIPs = append(p.Status.HostIPs, corev1.HostIP{IP: pick(g.r, ips)}) })
	if len(p.Status.PodIPs) > 0 {
		p.Status.PodIP = p.Status.PodIPs[0].IP
	}
	if len(p.Status.HostIPs) > 0 {
		p.Status.HostIP = p.Status.HostIPs[0].IP
	}
	return p
}

func (g gen) service() runtime.Object {
	s := &corev1.Service{ObjectMeta: g.meta(true), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
		Ports: []corev1.ServicePort{{Port: 80}}}}
	g.some(3, func() {
		in := corev1.LoadBalancerIngress{IP: pick(g.r, append(ips, ""))}
		if in.IP == "" {
			in.Hostname = "lb.example.com"
		}
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, in)
	})
	return s
}

func (g gen) endpointSlice() runtime.Object {
	s := &discoveryv1.EndpointSlice{ObjectMeta: g.meta(true),
		AddressType: pick(g.r, []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN})}
	g.label(&s.ObjectMeta, discoveryv1.LabelManagedBy, "endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io", "other")
	g.some(3, func() {
		var ep discoveryv1.Endpoint
		for i := 1 + g.r.Intn(2); i > 0; i-- {
			ep.Addresses = append(ep.Addresses, pick(g.r, ips))
		}
		s.Endpoints = append(s.Endpoints, ep)
	})
	return s
}

func (g gen) ingress() runtime.Object {
	in := &networkingv1.Ingress{ObjectMeta: g.meta(true)}
	g.annotate(&in.ObjectMeta, "kubernetes.io/ingress.class")
	g.maybe(func() { in.Spec.IngressClassName = ptr.To("nginx") })
	in.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "s",
		Port: networkingv1.ServiceBackendPort{Number: 80}}}
	g.some(3, func() {
		lb := networkingv1.IngressLoadBalancerIngress{IP: pick(g.r, append(ips, ""))}
		if lb.IP == "" {
			lb.Hostname = "lb.example.com"
		}
		in.Status.LoadBalancer.Ingress = append(in.Status.LoadBalancer.Ingress, lb)
	})
	return in
}

func (g gen) peers() []networkingv1.NetworkPolicyPeer {
	var out []networkingv1.NetworkPolicyPeer
	g.some(2, func() {
		var p networkingv1.NetworkPolicyPeer
		if g.r.Intn(3) == 0 {
			p.PodSelector = &metav1.LabelSelector{}
		} else {
			p.IPBlock = &networkingv1.IPBlock{CIDR: pick(g.r, cidrs)}
			g.some(2, func() { p.IPBlock.Except = append(p.IPBlock.Except, pick(g.r, cidrs)) })
		}
		out = append(out, p)
	})
	return out
}

func (g gen) networkPolicy() runtime.Object {
	np := &networkingv1.NetworkPolicy{ObjectMeta: g.meta(true)}
	g.some(2, func() {
		np.Spec.Ingress = append(np.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{From: g.peers()})
	})
	g.some(2, func() { np.Spec.Egress = append(np.Spec.Egress, networkingv1.NetworkPolicyEgressRule{To: g.peers()}) })
	return np
}

func (g gen) runtimeClass() runtime.Object {
	rc := &nodev1.RuntimeClass{ObjectMeta: g.meta(false), Handler: "runc"}
	g.maybe(func() {
		rc.Scheduling = &nodev1.Scheduling{}
		g.some(3, func() {
			if rc.Scheduling.NodeSelector == nil {
				rc.Scheduling.NodeSelector = map[string]string{}
			}
			rc.Scheduling.NodeSelector[pick(g.r, nodeLabels)] = "v"
		})
	})
	return rc
}

func (g gen) storageClass() runtime.Object {
	sc := &storagev1.StorageClass{ObjectMeta: g.meta(false), Provisioner: "example.com/p"}
	g.some(2, func() {
		var term corev1.TopologySelectorTerm
		g.some(2, func() {
			term.MatchLabelExpressions = append(term.MatchLabelExpressions,
				corev1.TopologySelectorLabelRequirement{Key: pick(g.r, nodeLabels), Values: []string{"a"}})
		})
		sc.AllowedTopologies = append(sc.AllowedTopologies, term)
	})
	return sc
}

// rules are webhook rules naming resources webhooks never see, others,
// and wildcards, sometimes more than once.
func (g gen) rules() []admissionregistrationv1.RuleWithOperations {
	groups := []string{"", "authentication.k8s.io", "authorization.k8s.io", "apps", "*"}
	resources := []string{"tokenreviews", "subjectaccessreviews", "selfsubjectreviews", "localsubjectaccessreviews",
		"selfsubjectrulesreviews", "pods", "tokenreviews/status", "*"}
	var out []admissionregistrationv1.RuleWithOperations
	g.some(3, func() {
		r := admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}}
		r.APIVersions = []string{"v1"}
		for i := 1 + g.r.Intn(2); i > 0; i-- {
			r.APIGroups = append(r.APIGroups, pick(g.r, groups))
		}
		for i := 1 + g.r.Intn(3); i > 0; i-- {
			r.Resources = append(r.Resources, pick(g.r, resources))
		}
		out = append(out, r)
	})
	return out
}

func (g gen) admissionMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: pick(g.r, admissionNames), Generation: 1}
}

func (g gen) validatingWebhooks() runtime.Object {
	c := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: g.admissionMeta()}
	g.some(2, func() {
		c.Webhooks = append(c.Webhooks, admissionregistrationv1.ValidatingWebhook{Name: "a.example.com", Rules: g.rules(),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://example.com/v")},
			SideEffects:  ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}})
	})
	return c
}

func (g gen) mutatingWebhooks() runtime.Object {
	c := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: g.admissionMeta()}
	g.some(2, func() {
		c.Webhooks = append(c.Webhooks, admissionregistrationv1.MutatingWebhook{Name: "a.example.com", Rules: g.rules(),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://example.com/m")},
			SideEffects:  ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}})
	})
	return c
}

func (g gen) validatingPolicy() runtime.Object {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: g.admissionMeta(),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{Validations: []admissionregistrationv1.Validation{{Expression: "true"}}}}
}

func (g gen) validatingBinding() runtime.Object {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: g.admissionMeta(),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
}

func (g gen) mutatingPolicy() runtime.Object {
	return &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: g.admissionMeta(),
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{Mutations: []admissionregistrationv1.Mutation{{
			PatchType: admissionregistrationv1.PatchTypeJSONPatch, JSONPatch: &admissionregistrationv1.JSONPatch{Expression: "[]"}}}}}
}

func (g gen) mutatingBinding() runtime.Object {
	return &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: g.admissionMeta(),
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p"}}
}
