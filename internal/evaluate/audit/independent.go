package audit

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/evaluate"
)

// independentKinds are the kinds no admission plugin of the in-process
// server reads while it admits another object, and no controller it runs
// acts on: objects of these kinds are evaluated side by side. Objects of
// every other kind (namespaces, LimitRanges, ResourceQuotas,
// ServiceAccounts, Secrets, classes, RBAC, CRDs, custom resources, …) are
// evaluated alone, each seeing the in-process server as a single worker
// leaves it. A param of the configuration is never independent.
var independentKinds = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}: true, {Kind: "Pod"}: true, {Kind: "Service"}: true, {Kind: "Endpoints"}: true,
	{Kind: "Event"}: true, {Kind: "ReplicationController"}: true, {Kind: "PodTemplate"}: true,
	{Group: "apps", Kind: "Deployment"}: true, {Group: "apps", Kind: "ReplicaSet"}: true,
	{Group: "apps", Kind: "StatefulSet"}: true, {Group: "apps", Kind: "DaemonSet"}: true,
	{Group: "apps", Kind: "ControllerRevision"}: true,
	{Group: "batch", Kind: "Job"}:               true, {Group: "batch", Kind: "CronJob"}: true,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: true, {Group: "events.k8s.io", Kind: "Event"}: true,
	{Group: "networking.k8s.io", Kind: "Ingress"}: true, {Group: "networking.k8s.io", Kind: "NetworkPolicy"}: true,
	{Group: "policy", Kind: "PodDisruptionBudget"}: true, {Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: true,
}

// scheduling decides how objects are evaluated side by side.
type scheduling struct {
	params Params
}

func newScheduling(config []evaluate.Object) scheduling {
	return scheduling{params: ParamsOf(config)}
}

// task is obj with its claims: its kind and name, and a Service's cluster
// IPs and node ports, which two objects in the in-process server cannot
// both have.
func (s scheduling) task(obj evaluate.Object) task {
	gk := obj.GroupVersionKind().GroupKind()
	t := task{obj: obj, alone: !independentKinds[gk] || s.params.Match(obj)}
	if obj.Unstructured == nil {
		return t
	}
	t.claims = append(t.claims, fmt.Sprintf("%s/%s %s/%s", gk.Group, gk.Kind, obj.GetNamespace(), obj.GetName()))
	if gk == (schema.GroupKind{Kind: "Service"}) {
		t.claims = append(t.claims, serviceClaims(obj.Unstructured)...)
	}
	return t
}

func serviceClaims(u *unstructured.Unstructured) []string {
	var out []string
	ips, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "clusterIPs")
	if ip, _, _ := unstructured.NestedString(u.Object, "spec", "clusterIP"); ip != "" {
		ips = append(ips, ip)
	}
	for _, ip := range ips {
		if ip != "None" {
			out = append(out, "cluster IP "+ip)
		}
	}
	ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
	for _, p := range ports {
		if m, ok := p.(map[string]any); ok && m["nodePort"] != nil {
			out = append(out, fmt.Sprintf("node port %v", m["nodePort"]))
		}
	}
	return out
}
