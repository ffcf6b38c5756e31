package noderestriction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// named is one generated request, for every user.
type named struct {
	name string
	b    *admissiontest.Builder
}

// ownerRefs are the owner references a mirror pod may carry.
func ownerRefs() map[string][]metav1.OwnerReference {
	good := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "n1", UID: "n1-uid", Controller: ptr.To(true)}
	with := func(f func(*metav1.OwnerReference)) []metav1.OwnerReference {
		r := good
		f(&r)
		return []metav1.OwnerReference{r}
	}
	return map[string][]metav1.OwnerReference{
		"none":            nil,
		"good":            {good},
		"two":             {good, good},
		"kind":            with(func(r *metav1.OwnerReference) { r.Kind = "Pod" }),
		"apiVersion":      with(func(r *metav1.OwnerReference) { r.APIVersion = "apps/v1" }),
		"other node":      with(func(r *metav1.OwnerReference) { r.Name = "n2"; r.UID = "n2-uid" }),
		"missing node":    with(func(r *metav1.OwnerReference) { r.Name = "n3"; r.UID = "n3-uid" }),
		"not controller":  with(func(r *metav1.OwnerReference) { r.Controller = ptr.To(false) }),
		"nil controller":  with(func(r *metav1.OwnerReference) { r.Controller = nil }),
		"block deletion":  with(func(r *metav1.OwnerReference) { r.BlockOwnerDeletion = ptr.To(true) }),
		"block false":     with(func(r *metav1.OwnerReference) { r.BlockOwnerDeletion = ptr.To(false) }),
		"uid mismatch":    with(func(r *metav1.OwnerReference) { r.UID = "other" }),
		"n3 self (owner)": with(func(r *metav1.OwnerReference) { r.Name = "n3"; r.UID = "" }),
	}
}

// references are the ways a pod may refer to other API objects.
func references() map[string]func(*corev1.PodSpec) {
	vol := func(src corev1.VolumeSource) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) { s.Volumes = append(s.Volumes, corev1.Volume{Name: "v", VolumeSource: src}) }
	}
	secretEnv := corev1.EnvVar{Name: "e", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}}
	cmEnvFrom := corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}
	ref := &corev1.LocalObjectReference{Name: "s"}
	return map[string]func(*corev1.PodSpec){
		"nothing":           func(*corev1.PodSpec) {},
		"service account":   func(s *corev1.PodSpec) { s.ServiceAccountName = "sa1" },
		"image pull secret": func(s *corev1.PodSpec) { s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "s"}} },
		"empty pull secret": func(s *corev1.PodSpec) { s.ImagePullSecrets = []corev1.LocalObjectReference{{}} },
		"env secret":        func(s *corev1.PodSpec) { s.Containers[0].Env = []corev1.EnvVar{secretEnv} },
		"init env secret": func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{{Name: "i", Env: []corev1.EnvVar{secretEnv}}}
		},
		"envFrom configmap": func(s *corev1.PodSpec) { s.Containers[0].EnvFrom = []corev1.EnvFromSource{cmEnvFrom} },
		"ephemeral cm": func(s *corev1.PodSpec) {
			s.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", EnvFrom: []corev1.EnvFromSource{cmEnvFrom}}}}
		},
		"resource claim":     func(s *corev1.PodSpec) { s.ResourceClaims = []corev1.PodResourceClaim{{Name: "r"}} },
		"emptyDir":           vol(corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
		"hostPath":           vol(corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}),
		"secret volume":      vol(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}),
		"empty secret vol":   vol(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}),
		"configmap volume":   vol(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}),
		"empty cm volume":    vol(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}),
		"csi":                vol(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}),
		"csi secret":         vol(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: ref}}),
		"cephfs secret":      vol(corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{Monitors: []string{"m"}, SecretRef: ref}}),
		"cephfs":             vol(corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{Monitors: []string{"m"}}}),
		"azureFile":          vol(corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{SecretName: "s"}}),
		"azureFile no name":  vol(corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{}}),
		"glusterfs":          vol(corev1.VolumeSource{Glusterfs: &corev1.GlusterfsVolumeSource{EndpointsName: "e"}}),
		"pvc":                vol(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}),
		"ephemeral":          vol(corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}),
		"image":              vol(corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "r"}}),
		"no source":          vol(corev1.VolumeSource{}),
		"projected downward": vol(projected(corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{}})),
		"projected token":    vol(projected(tokenSource("a"))),
		"projected secret":   vol(projected(corev1.VolumeProjection{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}})),
		"projected cm":       vol(projected(corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}})),
		"projected empty cm": vol(projected(corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{}})),
		"projected ctb":      vol(projected(corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Path: "p"}})),
		"projected podcert":  vol(projected(corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{SignerName: "s"}})),
		"projected unknown":  vol(projected(corev1.VolumeProjection{})),
		"projected none":     vol(projected()),
	}
}

func mirrorPod(node string, annotated bool, owners []metav1.OwnerReference, ref func(*corev1.PodSpec)) *corev1.Pod {
	p := podOn("m", node)
	p.OwnerReferences = owners
	if annotated {
		p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	}
	ref(&p.Spec)
	return p
}

// podCreates: mirror pods with every owner reference and every reference,
// and plain pods.
func podCreates() []named {
	var out []named
	good := ownerRefs()["good"]
	for on, owners := range ownerRefs() {
		for _, node := range []string{"n1", "n3"} {
			out = append(out, named{fmt.Sprintf("create mirror pod on %s owned by %s", node, on),
				admissiontest.Create(mirrorPod(node, true, owners, func(*corev1.PodSpec) {}))})
		}
	}
	for rn, ref := range references() {
		out = append(out, named{"create mirror pod referencing " + rn, admissiontest.Create(mirrorPod("n1", true, good, ref))})
	}
	out = append(out,
		named{"create plain pod", admissiontest.Create(mirrorPod("n1", false, good, func(*corev1.PodSpec) {}))},
		named{"create mirror pod on n2", admissiontest.Create(mirrorPod("n2", true, good, func(*corev1.PodSpec) {}))},
		named{"create mirror pod unbound", admissiontest.Create(mirrorPod("", true, good, func(*corev1.PodSpec) {}))},
	)
	return out
}

// podWrites: delete, update, status, eviction and other subresources.
func podWrites() []named {
	mine, theirs, missing := podOn("p-mirror", "n1"), podOn("p2", "n2"), podOn("gone", "n1")
	var out []named
	for _, p := range []*corev1.Pod{mine, theirs, missing} {
		out = append(out,
			named{"delete pod " + p.Name, admissiontest.Delete(p)},
			named{"update pod " + p.Name, admissiontest.Update(p, p)},
			named{"evict pod " + p.Name, admissiontest.Create(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns}}).Resource(podsGVR, "eviction")},
		)
	}
	evict := func(objName string) *admissiontest.Builder {
		return admissiontest.Create(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: objName, Namespace: ns}}).Resource(podsGVR, "eviction")
	}
	out = append(out,
		named{"evict without any name", evict("")},
		named{"update eviction", admissiontest.Update(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p2", Namespace: ns}}, &policyv1.Eviction{}).Resource(podsGVR, "eviction")},
		named{"create pod binding", admissiontest.Create(&corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p2", Namespace: ns}}).Resource(podsGVR, "binding")},
		named{"update pod ephemeralcontainers", admissiontest.Update(mine, mine).Resource(podsGVR, "ephemeralcontainers")},
		named{"delete pod status", admissiontest.Delete(mine).Resource(podsGVR, "status")},
	)
	return append(out, podStatusUpdates()...)
}

// podStatusUpdates change each part of a pod status a node may or may not.
func podStatusUpdates() []named {
	changes := map[string]func(*corev1.Pod){
		"phase":          func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning },
		"labels":         func(p *corev1.Pod) { p.Labels = map[string]string{"a": "b"} },
		"claim statuses": func(p *corev1.Pod) { p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "r"}} },
		"claim name":     func(p *corev1.Pod) { p.Status.ResourceClaimStatuses[0].ResourceClaimName = ptr.To("y") },
		"extended claim": func(p *corev1.Pod) {
			p.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: "x"}
		},
		"node allocatable": func(p *corev1.Pod) {
			p.Status.NodeAllocatableResourceClaimStatuses = []corev1.NodeAllocatableResourceClaimStatus{{ResourceClaimName: "x"}}
		},
	}
	var out []named
	for _, node := range []string{"n1", "n2"} {
		old := podOn("p", node)
		old.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "r", ResourceClaimName: ptr.To("x")}}
		for cn, change := range changes {
			pod := old.DeepCopy()
			change(pod)
			out = append(out, named{fmt.Sprintf("update status of pod on %s: %s", node, cn), admissiontest.Update(pod, old).Resource(podsGVR, "status")})
		}
		out = append(out, named{"create status on " + node, admissiontest.Create(old).Resource(podsGVR, "status")})
	}
	return out
}
