package registry

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Create/update preparation of core/v1 kinds other than Pod (upstream
// pkg/registry/core/*/strategy.go and, for Services, the parts of the REST
// storage that run before validation).

// prepareServiceForCreate keeps clusterIP and clusterIPs in step and fills ipFamilyPolicy / ipFamilies the way the service IP
// allocator does on a single-stack cluster. The cluster IP itself is
// allocated before, by the API server (apiserver's serviceips.go); node
// ports are not allocated.
func prepareServiceForCreate(obj runtime.Object) {
	svc := obj.(*corev1.Service)
	normalizeClusterIPs(svc, nil)
	initIPFamilyFields(svc)
}

func prepareServiceForUpdate(obj, old runtime.Object) {
	svc, oldSvc := obj.(*corev1.Service), old.(*corev1.Service)
	patchAllocatedValues(svc, oldSvc)
	normalizeClusterIPs(svc, oldSvc)
	dropTypeDependentFields(svc, oldSvc)
	initIPFamilyFields(svc)
}

func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName
}

func needsNodePort(svc *corev1.Service) bool {
	t := svc.Spec.Type
	return t == corev1.ServiceTypeNodePort || (t == corev1.ServiceTypeLoadBalancer && ptr.Deref(svc.Spec.AllocateLoadBalancerNodePorts, true))
}

// patchAllocatedValues carries over what the server allocated when an update
// omits it (clients often PUT what they first sent).
func patchAllocatedValues(svc, old *corev1.Service) {
	if needsClusterIP(old) && needsClusterIP(svc) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			svc.Spec.ClusterIPs = old.Spec.ClusterIPs
		}
	}
	if needsNodePort(old) && needsNodePort(svc) {
		oldPorts := map[int32]int32{}
		for _, p := range old.Spec.Ports {
			oldPorts[p.Port] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			if p := &svc.Spec.Ports[i]; p.NodePort == 0 {
				p.NodePort = oldPorts[p.Port]
			}
		}
	}
	if needsHealthCheck(&old.Spec) && needsHealthCheck(&svc.Spec) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

// normalizeClusterIPs makes clusterIPs start with clusterIP when the user
// set only clusterIP (or only changed it).
func normalizeClusterIPs(svc, old *corev1.Service) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	switch {
	case svc.Spec.ClusterIP == "":
	case len(svc.Spec.ClusterIPs) == 0:
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	case old != nil && old.Spec.ClusterIP != svc.Spec.ClusterIP && sameStrings(old.Spec.ClusterIPs, svc.Spec.ClusterIPs):
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
}

// dropTypeDependentFields clears, on a type change, the values the old type
// had and the new one cannot use, when the user left them unchanged.
func dropTypeDependentFields(svc, old *corev1.Service) {
	if needsClusterIP(old) && !needsClusterIP(svc) {
		if sameStrings(svc.Spec.ClusterIPs, old.Spec.ClusterIPs) {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		}
		if sameFamilies(svc.Spec.IPFamilies, old.Spec.IPFamilies) {
			svc.Spec.IPFamilies = nil
		}
		if svc.Spec.IPFamilyPolicy != nil && old.Spec.IPFamilyPolicy != nil && *svc.Spec.IPFamilyPolicy == *old.Spec.IPFamilyPolicy {
			svc.Spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePort(old) && !needsNodePort(svc) {
		oldPorts := map[int32]int32{}
		for _, p := range old.Spec.Ports {
			oldPorts[p.Port] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			if p := &svc.Spec.Ports[i]; p.NodePort != 0 && p.NodePort == oldPorts[p.Port] {
				p.NodePort = 0
			}
		}
	}
	if needsHealthCheck(&old.Spec) && !needsHealthCheck(&svc.Spec) && svc.Spec.HealthCheckNodePort == old.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
}

// initIPFamilyFields infers ipFamilyPolicy and ipFamilies as the allocator of
// a single-stack IPv4 cluster does.
func initIPFamilyFields(svc *corev1.Service) {
	spec := &svc.Spec
	if spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	if spec.IPFamilyPolicy == nil {
		switch {
		case len(spec.ClusterIPs) == 2 || len(spec.IPFamilies) == 2:
			spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
		case spec.ClusterIP == corev1.ClusterIPNone && len(spec.Selector) == 0:
			spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
		default:
			spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
		}
	}
	if len(spec.IPFamilies) > 0 {
		return
	}
	family := corev1.IPv4Protocol
	if len(spec.ClusterIPs) > 0 && spec.ClusterIPs[0] != corev1.ClusterIPNone && isIPv6(spec.ClusterIPs[0]) {
		family = corev1.IPv6Protocol
	}
	spec.IPFamilies = []corev1.IPFamily{family}
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sameFamilies(a, b []corev1.IPFamily) bool {
	return sameStrings(familyStrings(a), familyStrings(b))
}

// prepareNamespaceForCreate makes the namespace Active and requires the
// "kubernetes" finalizer.
func prepareNamespaceForCreate(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status.Phase = corev1.NamespaceActive
	hasKube := false
	for _, f := range ns.Spec.Finalizers {
		hasKube = hasKube || f == corev1.FinalizerKubernetes
	}
	if !hasKube {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
	namespaceCanonicalize(ns)
}

// prepareNamespaceForUpdate keeps finalizers (changed through the finalize
// subresource).
func prepareNamespaceForUpdate(obj, old runtime.Object) {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Spec.Finalizers = oldNS.Spec.Finalizers
	namespaceCanonicalize(ns)
}

// namespaceCanonicalize sets the metadata.name label once the name is
// known (upstream does this in Canonicalize, for generated names).
func namespaceCanonicalize(ns *corev1.Namespace) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

// cleanServiceAccountSecrets keeps only the name of each secret reference.
func cleanServiceAccountSecrets(obj runtime.Object) {
	sa := obj.(*corev1.ServiceAccount)
	for i, s := range sa.Secrets {
		sa.Secrets[i] = corev1.ObjectReference{Name: s.Name}
	}
}

// preparePVCForCreate starts a claim Pending. Upstream's strategy leaves the
// cleared status empty and every read of the stored claim (the create's
// response included) decodes it with defaulting, which sets Pending; admitd
// does not default on reads, so it stores the phase. Unlike upstream,
// validating admission sees the phase.
func preparePVCForCreate(obj runtime.Object) {
	obj.(*corev1.PersistentVolumeClaim).Status.Phase = corev1.ClaimPending
}

// preparePVForCreate sets the initial phase, Pending.
func preparePVForCreate(obj runtime.Object) {
	now := metav1.Now()
	st := &obj.(*corev1.PersistentVolume).Status
	st.Phase, st.LastPhaseTransitionTime = corev1.VolumePending, &now
}
