package resourcequota

import (
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// gen makes random objects and quotas over a small vocabulary.
type gen struct{ r *rand.Rand }

const gpu corev1.ResourceName = "example.com/gpu"

var quantities = map[corev1.ResourceName][]string{
	corev1.ResourceCPU:              {"0", "10m", "100m", "250m", "300m", "500m", "1", "1.5", "2", "4"},
	corev1.ResourceMemory:           {"0", "1Mi", "64Mi", "100M", "128Mi", "1Gi", "1.5Gi", "2G"},
	corev1.ResourceEphemeralStorage: {"0", "500Mi", "1Gi", "1.5Gi"},
	"hugepages-2Mi":                 {"0", "2Mi", "4Mi"},
	gpu:                             {"0", "1", "2"},
	corev1.ResourceStorage:          {"0", "500Mi", "1Gi", "1.5Gi", "1500m", "10Gi"},
}

var containerResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, "hugepages-2Mi", gpu}

func (g gen) pick(s []string) string { return s[g.r.IntN(len(s))] }
func (g gen) chance(n int) bool      { return g.r.IntN(n) == 0 }

func (g gen) list(names []corev1.ResourceName) corev1.ResourceList {
	if g.chance(4) {
		return nil
	}
	l := corev1.ResourceList{}
	for _, n := range names {
		if g.r.IntN(len(names)+1) < 2 {
			l[n] = resource.MustParse(g.pick(quantities[n]))
		}
	}
	return l
}

func (g gen) requirements() corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Requests: g.list(containerResources), Limits: g.list(containerResources)}
	if g.chance(3) { // guaranteed: limits equal requests
		r.Limits = r.Requests
	}
	return r
}

func (g gen) container(name string) corev1.Container {
	return corev1.Container{Name: name, Image: "i", Resources: g.requirements()}
}

func (g gen) pod(i int) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "test"}}
	for c := 0; c <= g.r.IntN(2); c++ {
		p.Spec.Containers = append(p.Spec.Containers, g.container(fmt.Sprintf("c%d", c)))
	}
	if g.chance(3) {
		ic := g.container("init")
		if g.chance(2) {
			ic.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, ic)
	}
	if g.chance(6) {
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("10Mi")}
	}
	if g.chance(6) {
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: g.list([]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory})}
		p.Spec.Resources.Limits = p.Spec.Resources.Requests
	}
	switch g.r.IntN(4) {
	case 0:
		p.Spec.ActiveDeadlineSeconds = ptr.To(int64(30))
	case 1:
		p.Spec.ActiveDeadlineSeconds = ptr.To(int64(0))
	}
	p.Spec.PriorityClassName = g.pick([]string{"", "", "high", "low"})
	p.Status.Phase = corev1.PodPhase(g.pick([]string{"", "", "Running", "Pending", "Succeeded", "Failed"}))
	if g.chance(8) {
		p.Status.QOSClass = corev1.PodQOSClass(g.pick([]string{"BestEffort", "Burstable", "Guaranteed"}))
	}
	if g.chance(6) {
		term := corev1.PodAffinityTerm{TopologyKey: "zone"}
		if g.chance(2) {
			term.Namespaces = []string{"other"}
		} else if g.chance(2) {
			term.NamespaceSelector = &metav1.LabelSelector{}
		}
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
		if g.chance(2) {
			p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = []corev1.PodAffinityTerm{term}
		} else {
			p.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term}}
		}
	}
	if g.chance(10) {
		past := metav1.NewTime(time.Now().Add(-time.Hour))
		if g.chance(2) {
			past = metav1.NewTime(time.Now().Add(time.Hour))
		}
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &past, ptr.To(int64(30))
	}
	return p
}

func (g gen) service(i int) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i), Namespace: "test"}}
	s.Spec.Type = corev1.ServiceType(g.pick([]string{"", "ClusterIP", "NodePort", "LoadBalancer", "ExternalName"}))
	for p := 0; p < g.r.IntN(4); p++ {
		port := corev1.ServicePort{Port: int32(80 + p)}
		if g.chance(2) {
			port.NodePort = int32(30000 + p)
		}
		s.Spec.Ports = append(s.Spec.Ports, port)
	}
	switch g.r.IntN(3) {
	case 0:
		s.Spec.AllocateLoadBalancerNodePorts = ptr.To(false)
	case 1:
		s.Spec.AllocateLoadBalancerNodePorts = ptr.To(true)
	}
	return s
}

func (g gen) claim(i int) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c%d", i), Namespace: "test"}}
	switch g.r.IntN(4) {
	case 0:
		c.Spec.StorageClassName = ptr.To("gold")
	case 1:
		c.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "silver"}
	case 2:
		c.Spec.StorageClassName = ptr.To("")
	}
	if !g.chance(5) {
		c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(g.pick(quantities[corev1.ResourceStorage]))}
	}
	if g.chance(4) {
		c.Status.AllocatedResources = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(g.pick(quantities[corev1.ResourceStorage]))}
	}
	if g.chance(4) {
		c.Spec.VolumeAttributesClassName = ptr.To(g.pick([]string{"fast", "slow"}))
	}
	return c
}

// resourceClaim is a claim of 0–3 requests, exact or with alternatives, for
// devices of the gpu and nic classes in every allocation mode.
func (g gen) resourceClaim(i int) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rc%d", i), Namespace: "test"}}
	mode := func() (resourcev1.DeviceAllocationMode, int64) {
		return resourcev1.DeviceAllocationMode(g.pick([]string{"ExactCount", "ExactCount", "ExactCount", "ExactCount", "All", "", "Other"})), int64(g.r.IntN(3))
	}
	for n := range g.r.IntN(4) {
		r := resourcev1.DeviceRequest{Name: fmt.Sprintf("r%d", n)}
		if g.chance(3) {
			for s := range 1 + g.r.IntN(3) {
				m, count := mode()
				r.FirstAvailable = append(r.FirstAvailable, resourcev1.DeviceSubRequest{Name: fmt.Sprintf("s%d", s),
					DeviceClassName: g.pick([]string{"gpu", "nic"}), AllocationMode: m, Count: count})
			}
		} else if !g.chance(10) {
			m, count := mode()
			r.Exactly = &resourcev1.ExactDeviceRequest{DeviceClassName: g.pick([]string{"gpu", "nic"}), AllocationMode: m, Count: count}
		}
		c.Spec.Devices.Requests = append(c.Spec.Devices.Requests, r)
	}
	return c
}

func (g gen) configMap(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%d", i), Namespace: "test"}}
}

func (g gen) widget(i int) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetName(fmt.Sprintf("w%d", i))
	u.SetNamespace("test")
	return u
}

// hardNames are the quota resource names quotas are made of.
var hardNames = map[string][]corev1.ResourceName{
	"pods": {"pods", "count/pods", "cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory",
		"requests.ephemeral-storage", "limits.ephemeral-storage", "ephemeral-storage", "hugepages-2Mi", "requests.hugepages-2Mi", "requests.example.com/gpu"},
	"services":               {"services", "count/services", "services.nodeports", "services.loadbalancers"},
	"persistentvolumeclaims": {"persistentvolumeclaims", "count/persistentvolumeclaims", "requests.storage", "gold.storageclass.storage.k8s.io/requests.storage", "gold.storageclass.storage.k8s.io/persistentvolumeclaims", "silver.storageclass.storage.k8s.io/requests.storage"},
	"configmaps":             {"configmaps", "count/configmaps"},
	"resourceclaims": {"count/resourceclaims.resource.k8s.io", "gpu.deviceclass.resource.k8s.io/devices", "nic.deviceclass.resource.k8s.io/devices",
		"requests.deviceclass.resource.kubernetes.io/gpu"},
	"widgets": {"count/widgets.example.com"},
}

var usedValues = []string{"0", "0", "0", "1", "1", "500m", "2", "10", "1Gi"}

var hardValues = []string{"0", "1", "2", "3", "500m", "1Gi", "2Gi", "10", "100"}

var podScopes = []corev1.ResourceQuotaScope{"Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "CrossNamespacePodAffinity"}

// quota is a random quota over the names of resource (and sometimes of
// another), with status.used near its limits and sometimes incomplete.
func (g gen) quota(i int, resource string) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q%d", i), Namespace: "test", ResourceVersion: "5"}}
	hard, used := corev1.ResourceList{}, corev1.ResourceList{}
	names := hardNames[resource]
	if g.chance(5) {
		names = hardNames["configmaps"]
	}
	for n := 0; n <= g.r.IntN(3); n++ {
		name := names[g.r.IntN(len(names))]
		hard[name] = resource_(g.pick(hardValues))
		if !g.chance(12) {
			used[name] = resource_(g.pick(usedValues))
		}
	}
	q.Spec.Hard, q.Status.Hard, q.Status.Used = hard, hard, used
	if g.chance(15) {
		q.Status.Used = nil
	}
	if resource == "pods" && g.chance(3) {
		q.Spec.Scopes = []corev1.ResourceQuotaScope{podScopes[g.r.IntN(len(podScopes))]}
	}
	if (resource == "pods" || resource == "persistentvolumeclaims") && g.chance(4) {
		q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{g.scopeSelector(resource)}}
	}
	return q
}

func resource_(s string) resource.Quantity { return resource.MustParse(s) }

func (g gen) scopeSelector(res string) corev1.ScopedResourceSelectorRequirement {
	name := corev1.ResourceQuotaScopePriorityClass
	values := []string{"high"}
	if res == "persistentvolumeclaims" {
		name, values = corev1.ResourceQuotaScopeVolumeAttributesClass, []string{"fast"}
	}
	if g.chance(6) {
		name = podScopes[g.r.IntN(len(podScopes))]
	}
	op := corev1.ScopeSelectorOperator(g.pick([]string{"In", "NotIn", "Exists", "DoesNotExist"}))
	if op == "Exists" || op == "DoesNotExist" {
		values = nil
	}
	return corev1.ScopedResourceSelectorRequirement{ScopeName: name, Operator: op, Values: values}
}
