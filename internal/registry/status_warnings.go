package registry

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The warnings of writes through /status, as upstream's status
// strategies' WarningsOnUpdate: addresses in a form that is not canonical.
// Every other status strategy of kube-apiserver 1.37 warns about nothing.

// podStatusWarnings: pod and host IPs (the pods/status strategy).
func podStatusWarnings(obj, _ runtime.Object) []string {
	st := &obj.(*corev1.Pod).Status
	var w []string
	for i, ip := range st.PodIPs {
		w = append(w, utilvalidation.GetWarningsForIP(field.NewPath("status", "podIPs").Index(i).Child("ip"), ip.IP)...)
	}
	for i, ip := range st.HostIPs {
		w = append(w, utilvalidation.GetWarningsForIP(field.NewPath("status", "hostIPs").Index(i).Child("ip"), ip.IP)...)
	}
	return w
}

// serviceStatusWarnings: load-balancer ingress IPs (services/status).
func serviceStatusWarnings(obj, _ runtime.Object) []string {
	return loadBalancerIPWarnings(obj.(*corev1.Service).Status.LoadBalancer.Ingress)
}

// loadBalancerIPWarnings warns about each ingress IP under
// status.loadBalancer.ingress[i] (the path names the entry, not its ip).
func loadBalancerIPWarnings(ingress []corev1.LoadBalancerIngress) []string {
	var w []string
	p := field.NewPath("status", "loadBalancer", "ingress")
	for i, in := range ingress {
		if in.IP != "" {
			w = append(w, utilvalidation.GetWarningsForIP(p.Index(i), in.IP)...)
		}
	}
	return w
}

// ingressStatusWarnings: an Ingress's load-balancer IPs (ingresses/status).
func ingressStatusWarnings(obj, _ runtime.Object) []string {
	var w []string
	p := field.NewPath("status", "loadBalancer", "ingress")
	for i, in := range obj.(*networkingv1.Ingress).Status.LoadBalancer.Ingress {
		if in.IP != "" {
			w = append(w, utilvalidation.GetWarningsForIP(p.Index(i), in.IP)...)
		}
	}
	return w
}
