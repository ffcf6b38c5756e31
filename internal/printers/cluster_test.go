package printers

import (
	"reflect"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// TestNetworkingTables mirrors upstream's TestPrintIngress,
// TestPrintIngressClass and TestPrintNetworkPolicy.
func TestNetworkingTables(t *testing.T) {
	rules := func(hosts ...string) []networkingv1.IngressRule {
		out := make([]networkingv1.IngressRule, len(hosts))
		for i, h := range hosts {
			out[i].Host = h
		}
		return out
	}
	ing := &networkingv1.Ingress{ObjectMeta: objMeta("web"), Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("nginx"),
		Rules: rules("foo.bar.com"), TLS: []networkingv1.IngressTLS{{}}},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{
			{IP: "2.3.4.5"}, {Hostname: "a-very-long-load-balancer-hostname.example.com"}}}}}
	many := &networkingv1.Ingress{ObjectMeta: objMeta("many"), Spec: networkingv1.IngressSpec{Rules: rules("a", "", "b", "c", "d")}}
	catchAll := &networkingv1.Ingress{ObjectMeta: objMeta("all"), Spec: networkingv1.IngressSpec{Rules: rules("")}}
	checkKind(t, lookup(t, "networking.k8s.io", "v1", "ingresses"), []string{"Name", "Class", "Hosts", "Address", "Ports", "Age"}, []cellCase{
		{name: "tls", obj: ing, cells: []any{"web", "nginx", "foo.bar.com", "2.3.4.5,a-very-long-load-balancer-hostname.example.com", "80, 443", "5m"}},
		{name: "more hosts", obj: many, cells: []any{"many", "<none>", "a,b,c + 2 more...", "", "80", "5m"}},
		{name: "catch all", obj: catchAll, cells: []any{"all", "<none>", "*", "", "80", "5m"}},
	})

	ic := &networkingv1.IngressClass{ObjectMeta: objMeta("nginx"), Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx",
		Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr.To("k8s.example.com"), Kind: "IngressParameters", Name: "external-lb"}}}
	checkKind(t, lookup(t, "networking.k8s.io", "v1", "ingressclasses"), []string{"Name", "Controller", "Parameters", "Age"}, []cellCase{
		{name: "parameters", obj: ic, cells: []any{"nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb", "5m"}},
		{name: "no parameters", obj: &networkingv1.IngressClass{ObjectMeta: objMeta("x"), Spec: networkingv1.IngressClassSpec{Controller: "c"}},
			cells: []any{"x", "c", "<none>", "5m"}},
	})

	np := &networkingv1.NetworkPolicy{ObjectMeta: objMeta("deny"), Spec: networkingv1.NetworkPolicySpec{PodSelector: *appSelector}}
	checkKind(t, lookup(t, "networking.k8s.io", "v1", "networkpolicies"), []string{"Name", "Pod-Selector", "Age"}, []cellCase{
		{name: "selector", obj: np, cells: []any{"deny", "app=web", "5m"}},
		{name: "all pods", obj: &networkingv1.NetworkPolicy{ObjectMeta: objMeta("all")}, cells: []any{"all", "<none>", "5m"}},
	})
}

// TestStorageClassTable mirrors upstream's TestPrintStorageClass and its
// effective-default convertor (pkg/registry/storage/storageclass).
func TestStorageClassTable(t *testing.T) {
	res := lookup(t, "storage.k8s.io", "v1", "storageclasses")
	class := func(name string, age time.Duration, isDefault bool) *storagev1.StorageClass {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(age)}, Provisioner: "csi.example.com"}
		if isDefault {
			sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
		}
		return sc
	}
	custom := class("slow", 5*time.Minute, false)
	custom.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRetain)
	custom.VolumeBindingMode = ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
	custom.AllowVolumeExpansion = ptr.To(true)
	checkKind(t, res, []string{"Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"}, []cellCase{
		{name: "defaults", obj: class("fast", 5*time.Minute, false), cells: []any{"fast", "csi.example.com", "Delete", "Immediate", false, "5m"}},
		{name: "set", obj: custom, cells: []any{"slow", "csi.example.com", "Retain", "WaitForFirstConsumer", true, "5m"}},
		{name: "default on its own", obj: class("std", 5*time.Minute, true), cells: []any{"std (default)", "csi.example.com", "Delete", "Immediate", false, "5m"}},
	})

	objs := []runtime.Object{class("old", time.Hour, true), class("b-new", time.Minute, true), class("a-new", time.Minute, true), class("plain", time.Hour, false)}
	tbl := Table(res, objs, now, Options{})
	var names []any
	for _, r := range tbl.Rows {
		names = append(names, r.Cells[0])
	}
	if want := []any{"old", "b-new", "a-new (default)", "plain"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Table(storageclasses with 3 defaults) names = %q, want %q", names, want)
	}
}

// TestSchedulingTables mirrors upstream's TestPrintPriorityClass,
// TestPrintRuntimeClass, TestPrintLease and TestPrintPodDisruptionBudget.
func TestSchedulingTables(t *testing.T) {
	pc := &schedulingv1.PriorityClass{ObjectMeta: objMeta("critical"), Value: 1000, GlobalDefault: true, PreemptionPolicy: ptr.To(corev1.PreemptNever)}
	checkKind(t, lookup(t, "scheduling.k8s.io", "v1", "priorityclasses"), []string{"Name", "Value", "Global-Default", "Age", "PreemptionPolicy"}, []cellCase{
		{name: "priorityclass", obj: pc, cells: []any{"critical", int64(1000), true, "5m", "Never"}},
	})
	rc := &nodev1.RuntimeClass{ObjectMeta: objMeta("gvisor"), Handler: "runsc"}
	checkKind(t, lookup(t, "node.k8s.io", "v1", "runtimeclasses"), []string{"Name", "Handler", "Age"}, []cellCase{
		{name: "runtimeclass", obj: rc, cells: []any{"gvisor", "runsc", "5m"}},
	})
	lease := &coordinationv1.Lease{ObjectMeta: objMeta("kube-scheduler"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node1_abc")}}
	checkKind(t, lookup(t, "coordination.k8s.io", "v1", "leases"), []string{"Name", "Holder", "Age"}, []cellCase{
		{name: "held", obj: lease, cells: []any{"kube-scheduler", "node1_abc", "5m"}},
		{name: "free", obj: &coordinationv1.Lease{ObjectMeta: objMeta("free")}, cells: []any{"free", "", "5m"}},
	})
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: objMeta("web"), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("22%"))},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 5}}
	pdbMax := &policyv1.PodDisruptionBudget{ObjectMeta: objMeta("db"), Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(11))}}
	checkKind(t, lookup(t, "policy", "v1", "poddisruptionbudgets"), []string{"Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"}, []cellCase{
		{name: "min available", obj: pdb, cells: []any{"web", "22%", "N/A", int64(5), "5m"}},
		{name: "max unavailable", obj: pdbMax, cells: []any{"db", "N/A", "11", int64(0), "5m"}},
	})
}

// TestRBACAndCertificateTables mirrors upstream's TestPrintRoleBinding,
// TestPrintClusterRoleBinding and TestPrintCertificateSigningRequest.
func TestRBACAndCertificateTables(t *testing.T) {
	subjects := []rbacv1.Subject{{Kind: "User", Name: "alice"}, {Kind: "Group", Name: "devs"}, {Kind: "User", Name: "bob"},
		{Kind: "ServiceAccount", Namespace: "ci", Name: "builder"}, {Kind: "Robot", Name: "r2"}}
	ref := rbacv1.RoleRef{Kind: "ClusterRole", Name: "edit"}
	header := []string{"Name", "Role", "Age", "+Users", "+Groups", "+ServiceAccounts"}
	checkKind(t, lookup(t, "rbac.authorization.k8s.io", "v1", "rolebindings"), header, []cellCase{
		{name: "rolebinding", obj: &rbacv1.RoleBinding{ObjectMeta: objMeta("edit"), RoleRef: ref, Subjects: subjects},
			cells: []any{"edit", "ClusterRole/edit", "5m", "alice, bob", "devs", "ci/builder"}},
	})
	checkKind(t, lookup(t, "rbac.authorization.k8s.io", "v1", "clusterrolebindings"), header, []cellCase{
		{name: "no subjects", obj: &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta("view"), RoleRef: ref},
			cells: []any{"view", "ClusterRole/edit", "5m", "", "", ""}},
	})

	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: objMeta("csr1"), Spec: certificatesv1.CertificateSigningRequestSpec{
		SignerName: "kubernetes.io/kube-apiserver-client", Username: "alice", ExpirationSeconds: ptr.To[int32](7200)},
		Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("cert"), Conditions: []certificatesv1.CertificateSigningRequestCondition{
			{Type: certificatesv1.CertificateApproved}, {Type: certificatesv1.CertificateFailed}}}}
	denied := &certificatesv1.CertificateSigningRequest{ObjectMeta: objMeta("csr2"), Status: certificatesv1.CertificateSigningRequestStatus{
		Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved}, {Type: certificatesv1.CertificateDenied}}}}
	checkKind(t, lookup(t, "certificates.k8s.io", "v1", "certificatesigningrequests"),
		[]string{"Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"}, []cellCase{
			{name: "approved, failed, issued", obj: csr, cells: []any{"csr1", "5m", "kubernetes.io/kube-apiserver-client", "alice", "120m", "Approved,Failed,Issued"}},
			{name: "denied", obj: denied, cells: []any{"csr2", "5m", "<none>", "", "<none>", "Denied"}},
			{name: "pending", obj: &certificatesv1.CertificateSigningRequest{ObjectMeta: objMeta("csr3")}, cells: []any{"csr3", "5m", "<none>", "", "<none>", "Pending"}},
		})
}

// TestEndpointSliceTable mirrors upstream's TestPrintEndpointSlice.
func TestEndpointSliceTable(t *testing.T) {
	es := &discoveryv1.EndpointSlice{ObjectMeta: objMeta("web-abc"), AddressType: discoveryv1.AddressTypeIPv4,
		Ports:     []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}, {Name: ptr.To("https")}, {}, {Port: ptr.To[int32](8080)}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3", "10.1.2.4"}}, {Addresses: []string{"10.1.2.5"}}}}
	checkKind(t, lookup(t, "discovery.k8s.io", "v1", "endpointslices"), []string{"Name", "AddressType", "Ports", "Endpoints", "Age"}, []cellCase{
		{name: "slice", obj: es, cells: []any{"web-abc", "IPv4", "80,https,* + 1 more...", "10.1.2.3,10.1.2.4,10.1.2.5", "5m"}},
		{name: "empty", obj: &discoveryv1.EndpointSlice{ObjectMeta: objMeta("e"), AddressType: discoveryv1.AddressTypeIPv6},
			cells: []any{"e", "IPv6", "<unset>", "<unset>", "5m"}},
	})
}

// TestAdmissionTables mirrors upstream's TestPrintMutatingWebhook,
// TestPrintValidatingWebhook, TestPrintValidatingAdmissionPolicy(Binding)
// and their mutating counterparts.
func TestAdmissionTables(t *testing.T) {
	const group = "admissionregistration.k8s.io"
	webhooks := []string{"Name", "Webhooks", "Age"}
	checkKind(t, lookup(t, group, "v1", "mutatingwebhookconfigurations"), webhooks, []cellCase{
		{name: "mutating", obj: &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: objMeta("inject"),
			Webhooks: make([]admissionregistrationv1.MutatingWebhook, 2)}, cells: []any{"inject", int64(2), "5m"}},
	})
	checkKind(t, lookup(t, group, "v1", "validatingwebhookconfigurations"), webhooks, []cellCase{
		{name: "validating", obj: &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: objMeta("policy")},
			cells: []any{"policy", int64(0), "5m"}},
	})

	paramKind := &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Limits"}
	checkKind(t, lookup(t, group, "v1", "validatingadmissionpolicies"), []string{"Name", "Validations", "ParamKind", "Age"}, []cellCase{
		{name: "with params", obj: &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: objMeta("limits"),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{ParamKind: paramKind, Validations: make([]admissionregistrationv1.Validation, 3)}},
			cells: []any{"limits", int64(3), "example.com/v1/Limits", "5m"}},
	})
	checkKind(t, lookup(t, group, "v1", "mutatingadmissionpolicies"), []string{"Name", "Mutations", "ParamKind", "Age"}, []cellCase{
		{name: "without params", obj: &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: objMeta("labels"),
			Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{Mutations: make([]admissionregistrationv1.Mutation, 1)}},
			cells: []any{"labels", int64(1), "<unset>", "5m"}},
	})

	bindings := []string{"Name", "PolicyName", "ParamRef", "Age"}
	vapb := func(ref *admissionregistrationv1.ParamRef) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: objMeta("b"),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "limits", ParamRef: ref}}
	}
	checkKind(t, lookup(t, group, "v1", "validatingadmissionpolicybindings"), bindings, []cellCase{
		{name: "namespaced param", obj: vapb(&admissionregistrationv1.ParamRef{Namespace: "ns", Name: "p"}), cells: []any{"b", "limits", "ns/p", "5m"}},
		{name: "param without namespace", obj: vapb(&admissionregistrationv1.ParamRef{Name: "p"}), cells: []any{"b", "limits", "*/p", "5m"}},
		{name: "selector", obj: vapb(&admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{}}),
			cells: []any{"b", "limits", (&metav1.LabelSelector{}).String(), "5m"}},
		{name: "no param", obj: vapb(nil), cells: []any{"b", "limits", "<unset>", "5m"}},
	})
	checkKind(t, lookup(t, group, "v1", "mutatingadmissionpolicybindings"), bindings, []cellCase{
		{name: "mutating binding", obj: &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: objMeta("m"),
			Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "labels"}}, cells: []any{"m", "labels", "<unset>", "5m"}},
	})
}
