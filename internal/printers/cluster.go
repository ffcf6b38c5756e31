package printers

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

var ingressPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Class", "The name of the IngressClass resource that should be used for additional configuration"),
	str("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
	str("Address", "Address is a list containing ingress points for the load-balancer"),
	str("Ports", "Ports of TLS configurations that open"),
	ageColumn,
}, func(ing *networkingv1.Ingress, now time.Time) []any {
	class := "<none>"
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	}
	lb := ing.Status.LoadBalancer.Ingress
	ips, hosts := make([]string, len(lb)), make([]string, len(lb))
	for i := range lb {
		ips[i], hosts[i] = lb[i].IP, lb[i].Hostname
	}
	ports := "80"
	if len(ing.Spec.TLS) != 0 {
		ports = "80, 443"
	}
	return []any{ing.Name, class, ingressHosts(ing.Spec.Rules), loadBalancerAddresses(ips, hosts), ports, since(ing.CreationTimestamp, now)}
})

// ingressHosts lists the hosts of the first three rules, "*" when none names
// one, and how many rules follow.
func ingressHosts(rules []networkingv1.IngressRule) string {
	const max = 3
	var list []string
	for _, r := range rules {
		if len(list) == max {
			return fmt.Sprintf("%s + %d more...", strings.Join(list, ","), len(rules)-max)
		}
		if r.Host != "" {
			list = append(list, r.Host)
		}
	}
	if len(list) == 0 {
		return "*"
	}
	return strings.Join(list, ",")
}

var ingressClassPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Controller", "Controller that is responsible for handling this class"),
	str("Parameters", "A reference to a resource with additional parameters"),
	ageColumn,
}, func(ic *networkingv1.IngressClass, now time.Time) []any {
	params := "<none>"
	if p := ic.Spec.Parameters; p != nil {
		params = p.Kind
		if p.APIGroup != nil {
			params += "." + *p.APIGroup
		}
		params += "/" + p.Name
	}
	return []any{ic.Name, ic.Spec.Controller, params, since(ic.CreationTimestamp, now)}
})

var networkPolicyPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Pod-Selector", networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]),
	ageColumn,
}, func(np *networkingv1.NetworkPolicy, now time.Time) []any {
	return []any{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), since(np.CreationTimestamp, now)}
})

var storageClassDoc = storagev1.StorageClass{}.SwaggerDoc()

var storageClassPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Provisioner", storageClassDoc["provisioner"]),
	str("ReclaimPolicy", storageClassDoc["reclaimPolicy"]),
	str("VolumeBindingMode", storageClassDoc["volumeBindingMode"]),
	str("AllowVolumeExpansion", storageClassDoc["allowVolumeExpansion"]),
	ageColumn,
}, func(sc *storagev1.StorageClass, now time.Time) []any {
	name := sc.Name
	if isDefaultClass(sc) {
		name += " (default)"
	}
	reclaim := string(corev1.PersistentVolumeReclaimDelete)
	if sc.ReclaimPolicy != nil {
		reclaim = string(*sc.ReclaimPolicy)
	}
	binding := string(storagev1.VolumeBindingImmediate)
	if sc.VolumeBindingMode != nil {
		binding = string(*sc.VolumeBindingMode)
	}
	return []any{name, sc.Provisioner, reclaim, binding, deref(sc.AllowVolumeExpansion), since(sc.CreationTimestamp, now)}
}).then(markEffectiveDefault)

func isDefaultClass(sc *storagev1.StorageClass) bool {
	return sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
		sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true"
}

// markEffectiveDefault keeps "(default)" on the effective default only: among
// the listed classes annotated as default, the newest (then the first by
// name), as upstream's StorageClass convertor does. A single object is judged
// by its own annotation, upstream's behaviour without a lister.
func markEffectiveDefault(rows []metav1.TableRow, objs []runtime.Object) {
	if len(objs) < 2 {
		return
	}
	var defaults []*storagev1.StorageClass
	for _, obj := range objs {
		if sc, err := as[storagev1.StorageClass](obj); err == nil && isDefaultClass(sc) {
			defaults = append(defaults, sc)
		}
	}
	if len(defaults) < 2 {
		return
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if ti == tj {
			return defaults[i].Name < defaults[j].Name
		}
		return ti > tj
	})
	for i := range rows {
		if name, ok := rows[i].Cells[0].(string); ok {
			name = strings.TrimSuffix(name, " (default)")
			if name == defaults[0].Name {
				name += " (default)"
			}
			rows[i].Cells[0] = name
		}
	}
}

var priorityClassDoc = schedulingv1.PriorityClass{}.SwaggerDoc()

var priorityClassPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	integer("Value", priorityClassDoc["value"]),
	boolean("Global-Default", priorityClassDoc["globalDefault"]),
	ageColumn,
	str("PreemptionPolicy", priorityClassDoc["preemptionPolicy"]),
}, func(pc *schedulingv1.PriorityClass, now time.Time) []any {
	policy := ""
	if pc.PreemptionPolicy != nil {
		policy = string(*pc.PreemptionPolicy)
	}
	return []any{pc.Name, int64(pc.Value), pc.GlobalDefault, since(pc.CreationTimestamp, now), policy}
})

// runtimeClassPrinter: upstream looks the Handler description up in
// ObjectMeta's docs, which have none, so it is empty.
var runtimeClassPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Handler", objectMetaDoc["handler"]),
	ageColumn,
}, func(rc *nodev1.RuntimeClass, now time.Time) []any {
	return []any{rc.Name, rc.Handler, since(rc.CreationTimestamp, now)}
})

var leasePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Holder", coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]),
	ageColumn,
}, func(l *coordinationv1.Lease, now time.Time) []any {
	return []any{l.Name, deref(l.Spec.HolderIdentity), since(l.CreationTimestamp, now)}
})

func bindingColumns(roleRefDoc, kind string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn,
		str("Role", roleRefDoc),
		ageColumn,
		wide(str("Users", "Users in the "+kind)),
		wide(str("Groups", "Groups in the "+kind)),
		wide(str("ServiceAccounts", "ServiceAccounts in the "+kind)),
	}
}

var roleBindingPrinter = kind(bindingColumns(rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"], "roleBinding"),
	func(rb *rbacv1.RoleBinding, now time.Time) []any {
		return bindingCells(rb.Name, rb.RoleRef, rb.Subjects, rb.CreationTimestamp, now)
	})

var clusterRoleBindingPrinter = kind(bindingColumns(rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], "clusterRoleBinding"),
	func(rb *rbacv1.ClusterRoleBinding, now time.Time) []any {
		return bindingCells(rb.Name, rb.RoleRef, rb.Subjects, rb.CreationTimestamp, now)
	})

func bindingCells(name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, created metav1.Time, now time.Time) []any {
	users, groups, sas := []string{}, []string{}, []string{}
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	return []any{name, ref.Kind + "/" + ref.Name, since(created, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}
}

var csrSpecDoc = certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()

var csrPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	ageColumn,
	str("SignerName", csrSpecDoc["signerName"]),
	str("Requestor", csrSpecDoc["request"]),
	str("RequestedDuration", csrSpecDoc["expirationSeconds"]),
	str("Condition", certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]),
}, func(csr *certificatesv1.CertificateSigningRequest, now time.Time) []any {
	requested := "<none>"
	if s := csr.Spec.ExpirationSeconds; s != nil {
		requested = duration.HumanDuration(time.Duration(*s) * time.Second)
	}
	return []any{csr.Name, since(csr.CreationTimestamp, now), orNone(csr.Spec.SignerName), csr.Spec.Username, requested, csrCondition(csr)}
})

// csrCondition is Denied, Approved or Pending, then ",Failed" and ",Issued"
// when they apply.
func csrCondition(csr *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	switch {
	case denied:
		status = "Denied"
	case approved:
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}

var podDisruptionBudgetPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("Min Available", "The minimum number of pods that must be available."),
	str("Max Unavailable", "The maximum number of pods that may be unavailable."),
	integer("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time."),
	ageColumn,
}, func(pdb *policyv1.PodDisruptionBudget, now time.Time) []any {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if pdb.Spec.MinAvailable != nil {
		minAvailable = pdb.Spec.MinAvailable.String()
	}
	if pdb.Spec.MaxUnavailable != nil {
		maxUnavailable = pdb.Spec.MaxUnavailable.String()
	}
	return []any{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), since(pdb.CreationTimestamp, now)}
})

var endpointSliceDoc = discoveryv1.EndpointSlice{}.SwaggerDoc()

var endpointSlicePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("AddressType", endpointSliceDoc["addressType"]),
	str("Ports", endpointSliceDoc["ports"]),
	str("Endpoints", endpointSliceDoc["endpoints"]),
	ageColumn,
}, func(es *discoveryv1.EndpointSlice, now time.Time) []any {
	ports := make([]string, len(es.Ports))
	for i, p := range es.Ports {
		switch {
		case p.Port != nil:
			ports[i] = strconv.Itoa(int(*p.Port))
		case p.Name != nil:
			ports[i] = *p.Name
		default:
			ports[i] = "*"
		}
	}
	var addresses []string
	for _, e := range es.Endpoints {
		addresses = append(addresses, e.Addresses...)
	}
	return []any{es.Name, string(es.AddressType), firstWithMore(ports, 3), firstWithMore(addresses, 3), since(es.CreationTimestamp, now)}
})
