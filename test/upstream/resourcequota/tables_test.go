package resourcequota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/resourcequota"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func tquota(name string, hard, used corev1.ResourceList, scopes ...corev1.ResourceQuotaScope) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test", ResourceVersion: "3"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard, Scopes: scopes}, Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
}

func tpod(name string, requests, limits corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}}}}
}

// TestUpstreamTables runs the situations of upstream's admission tests
// (plugin/pkg/admission/resourcequota/admission_test.go: below and over
// the limit, constraints, scopes, limited resources and scopes with and
// without a covering quota, negative usage, updates) through both plugins.
func TestUpstreamTables(t *testing.T) {
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	services := corev1.SchemeGroupVersion.WithResource("services")
	claims := corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	high := tpod("high", rl("cpu", "100m", "memory", "10Mi"), nil)
	high.Spec.PriorityClassName = "cluster-services"
	terminating := tpod("t", rl("cpu", "100m", "memory", "10Mi"), nil)
	terminating.Spec.ActiveDeadlineSeconds = ptr.To(int64(60))
	negative := tpod("neg", rl("cpu", "-1"), nil)
	lb := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb", Namespace: "test", ResourceVersion: "2"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}}}
	clusterIP := lb.DeepCopy()
	clusterIP.Spec.Type = corev1.ServiceTypeClusterIP
	gold := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "test"}, Spec: corev1.PersistentVolumeClaimSpec{
		StorageClassName: ptr.To("gold"), Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "10Gi")}}}
	cpuLimited := []ours.LimitedResource{{Resource: "pods", MatchContains: []string{"cpu"}}}
	scopeLimited := []ours.LimitedResource{{Resource: "pods", MatchScopes: []corev1.ScopedResourceSelectorRequirement{
		{ScopeName: "PriorityClass", Operator: "In", Values: []string{"cluster-services"}}}}}
	covering := tquota("q", rl("pods", "5"), rl("pods", "0"))
	covering.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
		{ScopeName: "PriorityClass", Operator: "In", Values: []string{"cluster-services"}}}}
	var s stats
	for _, r := range []request{
		{name: "below limit", gvr: pods, kind: "Pod", obj: tpod("p", rl("cpu", "100m", "memory", "50Gi"), nil),
			quotas: []*corev1.ResourceQuota{tquota("q", rl("cpu", "3", "memory", "100Gi", "pods", "5"), rl("cpu", "1", "memory", "50Gi", "pods", "3"))}},
		{name: "exceeds limit", gvr: pods, kind: "Pod", obj: tpod("p", rl("cpu", "3", "memory", "50Gi"), nil),
			quotas: []*corev1.ResourceQuota{tquota("q", rl("cpu", "3", "memory", "100Gi", "pods", "5"), rl("cpu", "1", "memory", "50Gi", "pods", "3"))}},
		{name: "enforces constraints", gvr: pods, kind: "Pod", obj: tpod("p", rl("cpu", "100m"), nil),
			quotas: []*corev1.ResourceQuota{tquota("q", rl("cpu", "3", "memory", "100Gi", "limits.cpu", "3"), rl("cpu", "1", "memory", "50Gi", "limits.cpu", "1"))}},
		{name: "no quota", gvr: pods, kind: "Pod", obj: tpod("p", rl("cpu", "100m"), nil)},
		{name: "terminating scope", gvr: pods, kind: "Pod", obj: terminating, quotas: []*corev1.ResourceQuota{
			tquota("t", rl("pods", "1"), rl("pods", "1"), "Terminating"), tquota("n", rl("pods", "1"), rl("pods", "1"), "NotTerminating")}},
		{name: "best effort scope ignores burstable", gvr: pods, kind: "Pod", obj: tpod("p", rl("cpu", "100m"), nil),
			quotas: []*corev1.ResourceQuota{tquota("q", rl("pods", "1"), rl("pods", "1"), "BestEffort")}},
		{name: "negative usage", gvr: pods, kind: "Pod", obj: negative, quotas: []*corev1.ResourceQuota{tquota("q", rl("cpu", "3"), rl("cpu", "1"))}},
		{name: "limited resource without quota", gvr: pods, kind: "Pod", obj: tpod("p", rl("cpu", "100m"), nil), limited: cpuLimited},
		{name: "limited resource with quota", gvr: pods, kind: "Pod", obj: tpod("p", rl("cpu", "100m"), nil), limited: cpuLimited,
			quotas: []*corev1.ResourceQuota{tquota("q", rl("requests.cpu", "3"), rl("requests.cpu", "0"))}},
		{name: "limited resource quota not covering", gvr: pods, kind: "Pod", obj: tpod("p", rl("cpu", "100m"), nil), limited: cpuLimited,
			quotas: []*corev1.ResourceQuota{tquota("q", rl("requests.memory", "3Gi"), rl("requests.memory", "0"))}},
		{name: "limited scope without covering quota", gvr: pods, kind: "Pod", obj: high, limited: scopeLimited},
		{name: "limited scope with covering quota", gvr: pods, kind: "Pod", obj: high, limited: scopeLimited, quotas: []*corev1.ResourceQuota{covering}},
		{name: "limited scope not matched", gvr: pods, kind: "Pod", obj: tpod("p", rl("cpu", "1"), nil), limited: scopeLimited},
		{name: "service becomes load balancer", gvr: services, kind: "Service", op: admission.Update, obj: lb, old: clusterIP,
			quotas: []*corev1.ResourceQuota{tquota("q", rl("services.loadbalancers", "1", "services", "5"), rl("services.loadbalancers", "1", "services", "1"))}},
		{name: "service update without change", gvr: services, kind: "Service", op: admission.Update, obj: lb, old: lb,
			quotas: []*corev1.ResourceQuota{tquota("q", rl("services.loadbalancers", "1"), rl("services.loadbalancers", "1"))}},
		{name: "claim of a class over its class quota", gvr: claims, kind: "PersistentVolumeClaim", obj: gold, quotas: []*corev1.ResourceQuota{
			tquota("q", rl("gold.storageclass.storage.k8s.io/requests.storage", "15Gi", "requests.storage", "100Gi"),
				rl("gold.storageclass.storage.k8s.io/requests.storage", "10Gi", "requests.storage", "10Gi"))}},
		{name: "dry run over the limit", gvr: pods, kind: "Pod", obj: tpod("p", rl("cpu", "3"), nil), dryRun: true,
			quotas: []*corev1.ResourceQuota{tquota("q", rl("cpu", "3"), rl("cpu", "1"))}},
		{name: "dry run within the limit charges nothing", gvr: pods, kind: "Pod", obj: tpod("p", rl("cpu", "1"), nil), dryRun: true,
			quotas: []*corev1.ResourceQuota{tquota("q", rl("cpu", "3"), rl("cpu", "1"))}},
	} {
		if r.op == "" {
			r.op = admission.Create
		}
		s.compare(t, r)
	}
	t.Logf("%d requests, %d refused; outcomes %v", s.cases, s.refused, s.outcomes)
	if s.refused < 8 {
		t.Errorf("only %d of the table's requests refused", s.refused)
	}
}
