package podwarnings

import (
	"math/rand"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// gen makes pods whose fields combine what upstream's warnings look at,
// with values that do and do not warn.
type gen struct{ r *rand.Rand }

func pick[T any](r *rand.Rand, from []T) T { return from[r.Intn(len(from))] }

// some calls f between 0 and max times.
func (g gen) some(max int, f func()) {
	for i := g.r.Intn(max + 1); i > 0; i-- {
		f()
	}
}

var (
	nodeLabels = []string{"beta.kubernetes.io/arch", "beta.kubernetes.io/os", "failure-domain.beta.kubernetes.io/zone",
		"node-role.kubernetes.io/master", "app.kubernetes.io/created-by", "kubernetes.io/os", "topology.kubernetes.io/zone"}
	labelValues    = []string{"amd64", "bad value", "-x", ""}
	containerNames = []string{"app", "side", "init"}
	quantities     = []string{"1Gi", "1.5", "1500m", "100m", "2", "0.5Ki"}
	ips            = []string{"10.0.0.1", "10.0.0.1", "010.0.0.1", "2001:db8::1", "2001:DB8::1", "::ffff:1.2.3.4"}
	paths          = []string{"a", "a/b", "a/", "b", "", "a/b/c", "ab"}
	names          = []string{"web", "web", "web.v1", "Web"}
)

func (g gen) quantities(names ...corev1.ResourceName) corev1.ResourceList {
	l := corev1.ResourceList{}
	for _, n := range names {
		if g.r.Intn(2) == 0 {
			l[n] = resource.MustParse(pick(g.r, quantities))
		}
	}
	return l
}

func (g gen) pod() *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pick(g.r, names), Namespace: "default", Annotations: g.annotations()}}
	s := &p.Spec
	g.some(2, func() {
		if s.NodeSelector == nil {
			s.NodeSelector = map[string]string{}
		}
		s.NodeSelector[pick(g.r, nodeLabels)] = "x"
	})
	s.Affinity = g.affinity()
	g.some(2, func() {
		c := corev1.TopologySpreadConstraint{TopologyKey: pick(g.r, nodeLabels), MaxSkew: 1}
		if g.r.Intn(2) == 0 {
			c.LabelSelector = &metav1.LabelSelector{}
		}
		s.TopologySpreadConstraints = append(s.TopologySpreadConstraints, c)
	})
	g.some(3, func() { s.Volumes = append(s.Volumes, g.volume()) })
	g.some(2, func() { s.HostAliases = append(s.HostAliases, corev1.HostAlias{IP: pick(g.r, ips)}) })
	g.some(3, func() {
		s.ImagePullSecrets = append(s.ImagePullSecrets, corev1.LocalObjectReference{Name: pick(g.r, []string{"a", "b", ""})})
	})
	if g.r.Intn(3) == 0 {
		s.Overhead = g.quantities(corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourceCPU)
	}
	if g.r.Intn(2) == 0 {
		s.SecurityContext = &corev1.PodSecurityContext{}
		if g.r.Intn(2) == 0 {
			s.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		}
		if g.r.Intn(2) == 0 {
			s.SecurityContext.AppArmorProfile = pick(g.r, []*corev1.AppArmorProfile{{Type: corev1.AppArmorProfileTypeRuntimeDefault},
				{Type: corev1.AppArmorProfileTypeUnconfined}, {Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("p")}})
		}
	}
	g.some(1, func() { s.InitContainers = append(s.InitContainers, g.container()) })
	g.some(3, func() { s.Containers = append(s.Containers, g.container()) })
	g.some(1, func() {
		s.EphemeralContainers = append(s.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon(g.container())})
	})
	if g.r.Intn(8) == 0 {
		s.OS = &corev1.PodOS{Name: pick(g.r, []corev1.OSName{corev1.Linux, corev1.Windows})}
	}
	if g.r.Intn(3) == 0 {
		s.TerminationGracePeriodSeconds = ptr.To(pick(g.r, []int64{-1, 0, 30}))
	}
	if g.r.Intn(3) == 0 {
		s.DNSConfig = &corev1.PodDNSConfig{}
		g.some(2, func() { s.DNSConfig.Nameservers = append(s.DNSConfig.Nameservers, pick(g.r, ips)) })
	}
	return p
}

func (g gen) annotations() map[string]string {
	keys := []string{"scheduler.alpha.kubernetes.io/critical-pod", "security.alpha.kubernetes.io/sysctls",
		"security.alpha.kubernetes.io/unsafe-sysctls", corev1.SeccompPodAnnotationKey, "other"}
	for _, c := range containerNames {
		keys = append(keys, corev1.SeccompContainerAnnotationKeyPrefix+c, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c)
	}
	a := map[string]string{}
	g.some(4, func() {
		a[pick(g.r, keys)] = pick(g.r, []string{"runtime/default", "unconfined", "localhost/p", "localhost/", "localhost/ p", "x"})
	})
	return a
}

func (g gen) affinity() *corev1.Affinity {
	if g.r.Intn(3) == 0 {
		return nil
	}
	term := func() corev1.NodeSelectorTerm {
		var t corev1.NodeSelectorTerm
		g.some(2, func() {
			e := corev1.NodeSelectorRequirement{Key: pick(g.r, nodeLabels), Operator: corev1.NodeSelectorOpIn}
			g.some(2, func() { e.Values = append(e.Values, pick(g.r, labelValues)) })
			t.MatchExpressions = append(t.MatchExpressions, e)
		})
		return t
	}
	podTerm := func() corev1.PodAffinityTerm {
		t := corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}
		if g.r.Intn(2) == 0 {
			t.LabelSelector = &metav1.LabelSelector{}
		}
		return t
	}
	podAffinity := func() (req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm) {
		g.some(2, func() { req = append(req, podTerm()) })
		g.some(2, func() { pref = append(pref, corev1.WeightedPodAffinityTerm{Weight: 1, PodAffinityTerm: podTerm()}) })
		return req, pref
	}
	a := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	if g.r.Intn(2) == 0 {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
		g.some(2, func() {
			n := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			n.NodeSelectorTerms = append(n.NodeSelectorTerms, term())
		})
	}
	g.some(2, func() {
		a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.PreferredSchedulingTerm{Weight: 1, Preference: term()})
	})
	if g.r.Intn(2) == 0 {
		a.PodAffinity = &corev1.PodAffinity{}
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = podAffinity()
	}
	if g.r.Intn(2) == 0 {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = podAffinity()
	}
	return a
}

func (g gen) keyToPaths() []corev1.KeyToPath {
	var out []corev1.KeyToPath
	g.some(3, func() { out = append(out, corev1.KeyToPath{Key: "k", Path: pick(g.r, paths)}) })
	return out
}

func (g gen) downwardFiles() []corev1.DownwardAPIVolumeFile {
	var out []corev1.DownwardAPIVolumeFile
	g.some(3, func() { out = append(out, corev1.DownwardAPIVolumeFile{Path: pick(g.r, paths)}) })
	return out
}

func (g gen) volume() corev1.Volume {
	v := corev1.Volume{Name: pick(g.r, []string{"v", "w"})}
	s := &v.VolumeSource
	switch g.r.Intn(16) {
	case 0:
		s.PhotonPersistentDisk = &corev1.PhotonPersistentDiskVolumeSource{}
	case 1:
		s.GitRepo = &corev1.GitRepoVolumeSource{}
	case 2:
		s.ScaleIO = &corev1.ScaleIOVolumeSource{}
	case 3:
		s.Flocker = &corev1.FlockerVolumeSource{}
	case 4:
		s.StorageOS = &corev1.StorageOSVolumeSource{}
	case 5:
		s.Quobyte = &corev1.QuobyteVolumeSource{}
	case 6:
		s.Glusterfs = &corev1.GlusterfsVolumeSource{}
	case 7:
		s.CephFS = &corev1.CephFSVolumeSource{}
	case 8:
		s.RBD = &corev1.RBDVolumeSource{}
	case 9:
		s.Ephemeral = &corev1.EphemeralVolumeSource{}
		if g.r.Intn(4) > 0 {
			s.Ephemeral.VolumeClaimTemplate = &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
				Resources: corev1.VolumeResourceRequirements{Requests: g.quantities(corev1.ResourceStorage),
					Limits: g.quantities(corev1.ResourceStorage)}}}
		}
	case 10:
		s.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Items: g.keyToPaths()}
	case 11:
		s.Secret = &corev1.SecretVolumeSource{SecretName: "sec", Items: g.keyToPaths()}
	case 12:
		s.DownwardAPI = &corev1.DownwardAPIVolumeSource{Items: g.downwardFiles()}
	case 13:
		s.EmptyDir = &corev1.EmptyDirVolumeSource{}
	default:
		s.Projected = &corev1.ProjectedVolumeSource{}
		g.some(4, func() { s.Projected.Sources = append(s.Projected.Sources, g.projection()) })
	}
	return v
}

func (g gen) projection() corev1.VolumeProjection {
	var p corev1.VolumeProjection
	switch g.r.Intn(7) {
	case 0:
		p.ConfigMap = &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Items: g.keyToPaths()}
	case 1:
		p.Secret = &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Items: g.keyToPaths()}
	case 2:
		p.DownwardAPI = &corev1.DownwardAPIProjection{Items: g.downwardFiles()}
	case 3:
		p.ServiceAccountToken = &corev1.ServiceAccountTokenProjection{Path: pick(g.r, paths)}
	case 4:
		p.ClusterTrustBundle = &corev1.ClusterTrustBundleProjection{Path: pick(g.r, paths)}
		if g.r.Intn(2) == 0 {
			p.ClusterTrustBundle.Name = ptr.To("bundle")
		} else {
			p.ClusterTrustBundle.SignerName = ptr.To("example.com/signer")
		}
	case 5:
		p.PodCertificate = &corev1.PodCertificateProjection{SignerName: "example.com/s",
			CertificateChainPath: pick(g.r, paths), KeyPath: pick(g.r, paths), CredentialBundlePath: pick(g.r, paths)}
	}
	return p
}

func (g gen) container() corev1.Container {
	c := corev1.Container{Name: pick(g.r, containerNames), Image: "i"}
	c.Resources.Limits = g.quantities(corev1.ResourceMemory, corev1.ResourceEphemeralStorage)
	c.Resources.Requests = g.quantities(corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourceCPU)
	if g.r.Intn(3) == 0 {
		c.SecurityContext = &corev1.SecurityContext{}
		if g.r.Intn(2) == 0 {
			c.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		}
		if g.r.Intn(2) == 0 {
			c.SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
		}
	}
	g.some(4, func() {
		e := corev1.EnvVar{Name: pick(g.r, []string{"X", "Y"}), Value: pick(g.r, []string{"v", "$(X)", "$(X)-more", "$(Y)"})}
		if g.r.Intn(5) == 0 {
			e.Value = ""
			e.ValueFrom = &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}
		}
		c.Env = append(c.Env, e)
	})
	g.some(3, func() {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: pick(g.r, []string{"", "http", "web"}),
			ContainerPort: pick(g.r, []int32{80, 443}), Protocol: pick(g.r, []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP}),
			HostPort: pick(g.r, []int32{0, 0, 8080, 8081}), HostIP: pick(g.r, []string{"", "", "10.0.0.1", "10.0.0.2"})})
	})
	return c
}
