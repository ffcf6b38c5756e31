package registry

import (
	"crypto/tls"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The client warnings of the core kinds other than Pods, Services and the
// pod-template kinds, as kube-apiserver 1.37's strategies give them (each
// function names the upstream one it matches). Each runs on a write that
// passed validation; old is nil on create.

// endpointsManagedByLabel and endpointsControllerName: Endpoints the
// endpoints controller wrote are not checked (upstream trusts its output).
const (
	endpointsManagedByLabel = "endpoints.kubernetes.io/managed-by"
	endpointsControllerName = "endpoint-controller"
)

// endpointsWarnings: addresses in a form that is not canonical, on create
// and update (endpointsWarnings of pkg/registry/core/endpoint).
func endpointsWarnings(obj, _ runtime.Object) []string {
	ep := obj.(*corev1.Endpoints)
	if ep.Labels[endpointsManagedByLabel] == endpointsControllerName {
		return nil
	}
	var w []string
	for i, s := range ep.Subsets {
		p := field.NewPath("subsets").Index(i)
		for j, a := range s.Addresses {
			w = append(w, utilvalidation.GetWarningsForIP(p.Child("addresses").Index(j).Child("ip"), a.IP)...)
		}
		for j, a := range s.NotReadyAddresses {
			w = append(w, utilvalidation.GetWarningsForIP(p.Child("notReadyAddresses").Index(j).Child("ip"), a.IP)...)
		}
	}
	return w
}

// nodeWarnings: the removed configSource, the unused externalID and pod
// CIDRs in a form that is not canonical, on create and update (after the
// node's preparation dropped a configSource it may not keep).
func nodeWarnings(obj, _ runtime.Object) []string {
	spec := &obj.(*corev1.Node).Spec
	var w []string
	if spec.ConfigSource != nil {
		w = append(w, "spec.configSource: the feature is removed")
	}
	if spec.DoNotUseExternalID != "" {
		w = append(w, "spec.externalID: this field is deprecated, and is unused by Kubernetes")
	}
	for i, cidr := range spec.PodCIDRs {
		w = append(w, utilvalidation.GetWarningsForCIDR(field.NewPath("spec", "podCIDRs").Index(i), cidr)...)
	}
	return w
}

// betaStorageClassAnnotation is the annotation a claim or volume named
// its class with before storageClassName.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// pvcWarnings: the beta class annotation and fractional storage sizes, on
// create and update (GetWarningsForPersistentVolumeClaim).
func pvcWarnings(obj, _ runtime.Object) []string {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	var w []string
	if _, ok := pvc.Annotations[betaStorageClassAnnotation]; ok {
		w = append(w, fmt.Sprintf(`%s: deprecated since v1.8; use "storageClassName" attribute instead`,
			metadataPath.Child("annotations").Key(betaStorageClassAnnotation)))
	}
	return append(w, claimSpecWarnings(specPath, &pvc.Spec)...)
}

// resourceQuotaWarnings: a hard request above its limit, for cpu and
// memory (whose bare names count as requests), storage and ephemeral
// storage; on create only (the quota strategy's WarningsOnCreate).
func resourceQuotaWarnings(obj, old runtime.Object) []string {
	if old != nil {
		return nil
	}
	hard := obj.(*corev1.ResourceQuota).Spec.Hard
	var w []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceStorage, corev1.ResourceEphemeralStorage} {
		reqName := "requests." + name
		req, ok := hard[reqName]
		if !ok && (name == corev1.ResourceCPU || name == corev1.ResourceMemory) {
			if req, ok = hard[name]; ok {
				reqName = name
			}
		}
		limName := "limits." + name
		lim, limOK := hard[limName]
		if ok && limOK && req.Cmp(lim) > 0 {
			w = append(w, fmt.Sprintf("ResourceQuota %s (%s) should be less than %s (%s)", reqName, req.String(), limName, lim.String()))
		}
	}
	return w
}

// secretWarnings: a TLS secret whose key does not go with its certificate
// (or that does not parse), as crypto/tls says, on create and update.
func secretWarnings(obj, _ runtime.Object) []string {
	s := obj.(*corev1.Secret)
	if s.Type != corev1.SecretTypeTLS {
		return nil
	}
	if _, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]); err != nil {
		return []string{err.Error()}
	}
	return nil
}

// enforceMountableSecretsAnnotation limits a service account's pods to
// the secrets it lists; deprecated in 1.32.
const enforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"

// serviceAccountWarnings: the enforce-mountable-secrets annotation, when
// a write sets it newly (an update over an account that had it does not
// warn).
func serviceAccountWarnings(obj, old runtime.Object) []string {
	if old != nil {
		if _, had := old.(*corev1.ServiceAccount).Annotations[enforceMountableSecretsAnnotation]; had {
			return nil
		}
	}
	if _, ok := obj.(*corev1.ServiceAccount).Annotations[enforceMountableSecretsAnnotation]; !ok {
		return nil
	}
	return []string{fmt.Sprintf("metadata.annotations[%s]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets",
		enforceMountableSecretsAnnotation)}
}
