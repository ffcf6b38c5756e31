package quota_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/quota"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestUsage(t *testing.T) {
	opts := quota.Options{PodLevelResources: true, RecoverVolumeExpansionFailure: true}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: rl("cpu", "250m", "memory", "1Gi", "hugepages-2Mi", "4Mi", "example.com/gpu", "1"),
		Limits:   rl("cpu", "500m")}}}}}
	finished := pod.DeepCopy()
	finished.Status.Phase = corev1.PodSucceeded
	lb := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: ptr.To(false),
		Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080}, {Port: 443}}}}
	claim := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("gold"),
		Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "1500m")}}, Status: corev1.PersistentVolumeClaimStatus{AllocatedResources: rl("storage", "2")}}
	for _, tc := range []struct {
		name string
		e    quota.Evaluator
		obj  runtime.Object
		want corev1.ResourceList
	}{
		{"pod", quota.NewPods(opts), pod, rl("count/pods", "1", "pods", "1", "cpu", "250m", "requests.cpu", "250m", "limits.cpu", "500m",
			"memory", "1Gi", "requests.memory", "1Gi", "hugepages-2Mi", "4Mi", "requests.hugepages-2Mi", "4Mi", "requests.example.com/gpu", "1")},
		{"finished pod", quota.NewPods(opts), finished, rl("count/pods", "1")},
		{"load balancer", quota.NewServices(), lb, rl("count/services", "1", "services", "1", "services.loadbalancers", "1", "services.nodeports", "1")},
		{"claim", quota.NewClaims(opts), claim, rl("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "requests.storage", "2",
			"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/requests.storage", "2")},
	} {
		got, err := tc.e.Usage(tc.obj)
		if err != nil || !quota.Equal(got, tc.want) {
			t.Errorf("%s: Usage = %s, %v; want %s", tc.name, quota.FormatList(got), err, quota.FormatList(tc.want))
		}
	}
}

func TestScopes(t *testing.T) {
	e := quota.NewPods(quota.Options{})
	pod := &corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "high", ActiveDeadlineSeconds: ptr.To(int64(10)),
		Containers: []corev1.Container{{Name: "c"}}}}
	hard := rl("pods", "3")
	for _, tc := range []struct {
		scopes []corev1.ResourceQuotaScope
		sel    []corev1.ScopedResourceSelectorRequirement
		want   bool
	}{
		{scopes: []corev1.ResourceQuotaScope{"Terminating", "BestEffort"}, want: true},
		{scopes: []corev1.ResourceQuotaScope{"NotTerminating"}, want: false},
		{scopes: []corev1.ResourceQuotaScope{"NotBestEffort"}, want: false},
		{sel: []corev1.ScopedResourceSelectorRequirement{{ScopeName: "PriorityClass", Operator: "In", Values: []string{"high", "x"}}}, want: true},
		{sel: []corev1.ScopedResourceSelectorRequirement{{ScopeName: "PriorityClass", Operator: "NotIn", Values: []string{"high"}}}, want: false},
		{sel: []corev1.ScopedResourceSelectorRequirement{{ScopeName: "PriorityClass", Operator: "DoesNotExist"}}, want: false},
		{sel: []corev1.ScopedResourceSelectorRequirement{{ScopeName: "CrossNamespacePodAffinity", Operator: "Exists"}}, want: false},
	} {
		q := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Scopes: tc.scopes}, Status: corev1.ResourceQuotaStatus{Hard: hard}}
		if tc.sel != nil {
			q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: tc.sel}
		}
		if got, err := e.Matches(q, pod); got != tc.want || err != nil {
			t.Errorf("scopes %v %v: Matches = %v, %v; want %v", tc.scopes, tc.sel, got, err, tc.want)
		}
	}
}

// The controller's sum: objects of any resource, custom ones counted by
// count/<resource>.<group>, only those the quota's scopes select.
func TestRegistryUsage(t *testing.T) {
	r := quota.NewRegistry(quota.Options{})
	w := &unstructured.Unstructured{}
	w.SetName("w")
	pods := []runtime.Object{
		&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1")}}}}},
		&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}},
	}
	objs := map[schema.GroupResource][]runtime.Object{
		{Resource: "pods"}:                          pods,
		{Group: "example.com", Resource: "widgets"}: {w, w, w},
	}
	list := func(gr schema.GroupResource, _ string) ([]runtime.Object, error) { return objs[gr], nil }
	hard := rl("pods", "10", "requests.cpu", "4", "count/widgets.example.com", "5", "configmaps", "3")
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	got, err := r.Usage(q, hard, list)
	want := rl("pods", "2", "requests.cpu", "1", "count/widgets.example.com", "3", "configmaps", "0")
	if err != nil || !quota.Equal(got, want) {
		t.Errorf("Usage = %s, %v; want %s", quota.FormatList(got), err, quota.FormatList(want))
	}
	q.Spec.Scopes = []corev1.ResourceQuotaScope{"NotBestEffort"}
	got, _ = r.Usage(q, hard, list)
	want = rl("pods", "1", "requests.cpu", "1", "count/widgets.example.com", "0", "configmaps", "0")
	if !quota.Equal(got, want) {
		t.Errorf("NotBestEffort: Usage = %s; want %s", quota.FormatList(got), quota.FormatList(want))
	}
}
