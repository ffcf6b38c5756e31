package node

import (
	"math/rand/v2"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The vocabulary is small so that generated requests often name objects of
// the generated cluster. "" is a name too: upstream skips some empty
// references and keeps others.
var (
	nodeNames  = []string{"n1", "n2", "n3"}
	namespaces = []string{"ns1", "ns2"}
	objNames   = []string{"a", "b", "c", ""}
	podNames   = []string{"p1", "p2", "p3", "p4"}
	pvNames    = []string{"pv1", "pv2", "pv3"}
	boundNames = []string{"x1", "x2"}
	// ephemeralNames are claims of ephemeral volumes, named <pod>-<volume>.
	ephemeralNames = []string{"p1-v0", "p2-v1", "p3-v0", "p4-late", "p1-late"}
)

type gen struct{ r *rand.Rand }

func (g gen) pick(s []string) string  { return s[g.r.IntN(len(s))] }
func (g gen) chance(percent int) bool { return g.r.IntN(100) < percent }
func (g gen) ptr(s string) *string    { return &s }

// name is mostly a name of the vocabulary, sometimes empty.
func (g gen) name() string {
	if g.chance(5) {
		return ""
	}
	return g.pick(objNames[:3])
}

func (g gen) pod(ns, name string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(g.pick([]string{"u1", "u2"}))}}
	if !g.chance(15) {
		p.Spec.NodeName = g.pick(nodeNames)
	}
	if g.chance(10) {
		p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "m"}
	}
	if g.chance(70) {
		p.Spec.ServiceAccountName = g.name()
	}
	for range g.r.IntN(2) {
		p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: g.name()})
	}
	for range g.r.IntN(2) {
		p.Spec.InitContainers = append(p.Spec.InitContainers, g.container())
	}
	for range 1 + g.r.IntN(2) {
		p.Spec.Containers = append(p.Spec.Containers, g.container())
	}
	for range g.r.IntN(2) {
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers,
			corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon(g.container())})
	}
	for i := range g.r.IntN(4) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "v" + string(rune('0'+i)), VolumeSource: g.volumeSource()})
	}
	g.claims(p)
	return p
}

func (g gen) container() corev1.Container {
	c := corev1.Container{Name: "c"}
	for range g.r.IntN(3) {
		var f corev1.EnvFromSource
		if g.chance(50) {
			f.SecretRef = &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: g.name()}}
		}
		if g.chance(50) {
			f.ConfigMapRef = &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: g.name()}}
		}
		c.EnvFrom = append(c.EnvFrom, f)
	}
	for range g.r.IntN(3) {
		e := corev1.EnvVar{Name: "E"}
		if g.chance(80) {
			e.ValueFrom = &corev1.EnvVarSource{}
			if g.chance(50) {
				e.ValueFrom.SecretKeyRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: g.name()}}
			}
			if g.chance(50) {
				e.ValueFrom.ConfigMapKeyRef = &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: g.name()}}
			}
		}
		c.Env = append(c.Env, e)
	}
	return c
}

// volumeSource sets one source, or now and then two, to exercise the order
// in which upstream reads them.
func (g gen) volumeSource() corev1.VolumeSource {
	var v corev1.VolumeSource
	g.setVolumeSource(&v)
	if g.chance(15) {
		g.setVolumeSource(&v)
	}
	return v
}

func (g gen) local() *corev1.LocalObjectReference {
	if g.chance(10) {
		return nil
	}
	return &corev1.LocalObjectReference{Name: g.name()}
}

func (g gen) setVolumeSource(v *corev1.VolumeSource) {
	switch g.r.IntN(15) {
	case 0:
		v.Secret = &corev1.SecretVolumeSource{SecretName: g.name()}
	case 1:
		v.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: g.name()}}
	case 2:
		v.Projected = &corev1.ProjectedVolumeSource{}
		for range 1 + g.r.IntN(3) {
			var s corev1.VolumeProjection
			if g.chance(50) {
				s.Secret = &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: g.name()}}
			} else {
				s.ConfigMap = &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: g.name()}}
			}
			v.Projected.Sources = append(v.Projected.Sources, s)
		}
	case 3:
		v.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: g.name()}
	case 4:
		v.Ephemeral = &corev1.EphemeralVolumeSource{}
	case 5:
		v.AzureFile = &corev1.AzureFileVolumeSource{SecretName: g.name()}
	case 6:
		v.CephFS = &corev1.CephFSVolumeSource{SecretRef: g.local()}
	case 7:
		v.Cinder = &corev1.CinderVolumeSource{SecretRef: g.local()}
	case 8:
		v.FlexVolume = &corev1.FlexVolumeSource{SecretRef: g.local()}
	case 9:
		v.RBD = &corev1.RBDVolumeSource{SecretRef: g.local()}
	case 10:
		v.ScaleIO = &corev1.ScaleIOVolumeSource{SecretRef: g.local()}
	case 11:
		v.ISCSI = &corev1.ISCSIVolumeSource{SecretRef: g.local()}
	case 12:
		v.StorageOS = &corev1.StorageOSVolumeSource{SecretRef: g.local()}
	case 13:
		v.CSI = &corev1.CSIVolumeSource{NodePublishSecretRef: g.local()}
	case 14:
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
}

// claims sets resource claims by name and by template, some with status
// entries (duplicated or empty), and an extended-resource claim.
func (g gen) claims(p *corev1.Pod) {
	entries := []string{"e1", "e2", "e3"}
	for _, e := range entries[:g.r.IntN(4)] {
		c := corev1.PodResourceClaim{Name: e}
		switch g.r.IntN(3) {
		case 0:
			c.ResourceClaimName = g.ptr(g.name())
		case 1:
			c.ResourceClaimTemplateName = g.ptr("t")
		}
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, c)
	}
	for range g.r.IntN(3) {
		st := corev1.PodResourceClaimStatus{Name: g.pick(entries)}
		if g.chance(80) {
			st.ResourceClaimName = g.ptr(g.name())
		}
		p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses, st)
	}
	if g.chance(20) {
		p.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: g.name()}
	}
}

// podUpdate changes a pod the way an update might: a new object, or only
// the node, the uid, an ephemeral container or the claim statuses.
func (g gen) podUpdate(old *corev1.Pod) *corev1.Pod {
	p := old.DeepCopy()
	switch g.r.IntN(6) {
	case 0:
		return g.pod(old.Namespace, old.Name)
	case 1:
		p.Spec.NodeName = g.pick(append(nodeNames, ""))
	case 2:
		p.UID = types.UID(g.pick([]string{"u1", "u2", "u3"}))
	case 3:
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers,
			corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon(g.container())})
	case 4:
		g.claims(p)
	case 5:
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "late", VolumeSource: g.volumeSource()})
	}
	return p
}

func (g gen) secretRef() *corev1.SecretReference {
	if g.chance(10) {
		return nil
	}
	r := &corev1.SecretReference{Name: g.name()}
	if g.chance(60) {
		r.Namespace = g.pick(namespaces)
	}
	return r
}

func (g gen) pv(name string) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if g.chance(85) {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: g.pick(namespaces), Name: g.name()}
	}
	s := &pv.Spec.PersistentVolumeSource
	switch g.r.IntN(11) {
	case 0:
		s.AzureFile = &corev1.AzureFilePersistentVolumeSource{SecretName: g.name()}
		if g.chance(50) {
			s.AzureFile.SecretNamespace = g.ptr(g.pick(append(namespaces, "")))
		}
	case 1:
		s.CephFS = &corev1.CephFSPersistentVolumeSource{SecretRef: g.secretRef()}
	case 2:
		s.Cinder = &corev1.CinderPersistentVolumeSource{SecretRef: g.secretRef()}
	case 3:
		s.FlexVolume = &corev1.FlexPersistentVolumeSource{SecretRef: g.secretRef()}
	case 4:
		s.RBD = &corev1.RBDPersistentVolumeSource{SecretRef: g.secretRef()}
	case 5:
		s.ScaleIO = &corev1.ScaleIOPersistentVolumeSource{SecretRef: g.secretRef()}
	case 6:
		s.ISCSI = &corev1.ISCSIPersistentVolumeSource{SecretRef: g.secretRef()}
	case 7:
		s.StorageOS = &corev1.StorageOSPersistentVolumeSource{}
		if g.chance(90) {
			s.StorageOS.SecretRef = &corev1.ObjectReference{Namespace: g.pick(append(namespaces, "")), Name: g.name()}
		}
	case 8:
		s.CSI = &corev1.CSIPersistentVolumeSource{ControllerPublishSecretRef: g.secretRef(), ControllerExpandSecretRef: g.secretRef(),
			NodePublishSecretRef: g.secretRef(), NodeStageSecretRef: g.secretRef(), NodeExpandSecretRef: g.secretRef()}
	case 9:
		s.HostPath = &corev1.HostPathVolumeSource{Path: "/x"}
	case 10:
		s.CephFS = &corev1.CephFSPersistentVolumeSource{SecretRef: g.secretRef()}
		s.RBD = &corev1.RBDPersistentVolumeSource{SecretRef: g.secretRef()}
	}
	return pv
}

func (g gen) va(name string) *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.VolumeAttachmentSpec{NodeName: g.pick(append(nodeNames, ""))}}
}

func (g gen) slice(name string) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if g.chance(80) {
		s.Spec.NodeName = g.ptr(g.pick(append(nodeNames, "")))
	}
	return s
}

func (g gen) pcr(ns, name string) *certificatesv1.PodCertificateRequest {
	return &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: certificatesv1.PodCertificateRequestSpec{NodeName: types.NodeName(g.pick(nodeNames))}}
}
