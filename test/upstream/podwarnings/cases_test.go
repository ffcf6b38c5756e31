package podwarnings

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func basePod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 1},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
}

func app(p *corev1.Pod) *corev1.Container { return &p.Spec.Containers[0] }

func annotate(p *corev1.Pod, k, v string) {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[k] = v
}

func mem(q string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}
}

// podCases are one pod per warning of upstream's pod warnings, with a
// part of the text it must give.
var podCases = []struct {
	name, want string
	set        func(p *corev1.Pod)
}{
	{"deprecated node selector label", `spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`,
		func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"beta.kubernetes.io/os": "linux"} }},
	{"deprecated label in required node affinity", "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated",
		func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "failure-domain.beta.kubernetes.io/zone", Operator: "In", Values: []string{"a"}}}}}}}}
		}},
	{"deprecated label in preferred node affinity", "preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: node-role.kubernetes.io/master is",
		func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1,
				Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "node-role.kubernetes.io/master", Operator: "Exists"}}}}}}}
		}},
	{"invalid value in preferred node affinity", "matchExpressions[0].values[0]: bad value is invalid, a valid label must be",
		func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1,
				Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "k", Operator: "In", Values: []string{"bad value"}}}}}}}}
		}},
	{"deprecated topology key", "topologySpreadConstraints[0].topologyKey: beta.kubernetes.io/arch is deprecated",
		func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{TopologyKey: "beta.kubernetes.io/arch", LabelSelector: &metav1.LabelSelector{}}}
		}},
	{"spread constraint without selector", "topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod",
		func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{TopologyKey: "kubernetes.io/hostname"}}
		}},
	{"critical-pod annotation", `metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+`,
		func(p *corev1.Pod) { annotate(p, "scheduler.alpha.kubernetes.io/critical-pod", "") }},
	{"sysctls annotation", `metadata.annotations[security.alpha.kubernetes.io/sysctls]: non-functional in v1.11+`,
		func(p *corev1.Pod) { annotate(p, "security.alpha.kubernetes.io/sysctls", "a=b") }},
	{"unsafe-sysctls annotation", `metadata.annotations[security.alpha.kubernetes.io/unsafe-sysctls]: non-functional in v1.11+`,
		func(p *corev1.Pod) { annotate(p, "security.alpha.kubernetes.io/unsafe-sysctls", "a=b") }},
	{"photon volume", "spec.volumes[0].photonPersistentDisk: deprecated in v1.11, non-functional in v1.16+",
		volume(corev1.VolumeSource{PhotonPersistentDisk: &corev1.PhotonPersistentDiskVolumeSource{}})},
	{"gitRepo volume", "spec.volumes[0].gitRepo: deprecated in v1.11, and disabled by default in v1.33+",
		volume(corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{Repository: "r"}})},
	{"scaleIO volume", "spec.volumes[0].scaleIO: deprecated in v1.16", volume(corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{}})},
	{"flocker volume", "spec.volumes[0].flocker: deprecated in v1.22", volume(corev1.VolumeSource{Flocker: &corev1.FlockerVolumeSource{}})},
	{"storageOS volume", "spec.volumes[0].storageOS: deprecated in v1.22", volume(corev1.VolumeSource{StorageOS: &corev1.StorageOSVolumeSource{}})},
	{"quobyte volume", "spec.volumes[0].quobyte: deprecated in v1.22", volume(corev1.VolumeSource{Quobyte: &corev1.QuobyteVolumeSource{}})},
	{"glusterfs volume", "spec.volumes[0].glusterfs: deprecated in v1.25", volume(corev1.VolumeSource{Glusterfs: &corev1.GlusterfsVolumeSource{}})},
	{"cephfs volume", "spec.volumes[0].cephfs: deprecated in v1.28", volume(corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{}})},
	{"rbd volume", "spec.volumes[0].rbd: deprecated in v1.28", volume(corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{}})},
	{"fractional ephemeral claim", `spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: fractional byte value "1500m" is invalid`,
		volume(corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1500m")}}}}}})},
	{"overlapping ConfigMap paths", `volume "v" (ConfigMap "cm"): overlapping paths: "a/b" with "a"`,
		volume(corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"},
			Items: []corev1.KeyToPath{{Key: "x", Path: "a"}, {Key: "y", Path: "a/b"}}}})},
	{"overlapping Secret paths", `volume "v" (Secret "s"): overlapping paths: "a" with "a"`,
		volume(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", Items: []corev1.KeyToPath{{Key: "x", Path: "a/"}, {Key: "y", Path: "a"}}}})},
	{"overlapping DownwardAPI paths", `volume "v" (DownwardAPI): overlapping paths: "a" with "a/b"`,
		volume(corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{Path: "a/b"}, {Path: "a"}}}})},
	{"overlapping projected paths", `volume "v" (Projected): overlapping paths: "token" (ServiceAccountToken) with "token" (ConfigMap "cm")`,
		volume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Items: []corev1.KeyToPath{{Key: "k", Path: "token"}}}},
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}})},
	{"overlapping bundle and certificate paths", `overlapping paths: "ca" (PodCertificate key) with "ca" (ClusterTrustBundle "example.com/s")`,
		volume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{SignerName: ptr.To("example.com/s"), Path: "ca"}},
			{PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/s", KeyPath: "ca"}}}}})},
	{"empty projected source", `volume "v" (Projected) has no sources provided`,
		volume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{}}}})},
	{"duplicate host alias", `spec.hostAliases[1].ip: duplicate ip "10.0.0.1"`,
		func(p *corev1.Pod) { p.Spec.HostAliases = []corev1.HostAlias{{IP: "10.0.0.1"}, {IP: "10.0.0.1"}} }},
	{"duplicate image pull secret", `spec.imagePullSecrets[1].name: duplicate name "r"`,
		func(p *corev1.Pod) { p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "r"}, {Name: "r"}} }},
	{"empty image pull secret", `spec.imagePullSecrets[0].name: invalid empty name ""`,
		func(p *corev1.Pod) { p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{}} }},
	{"fractional overhead", `spec.overhead[memory]: fractional byte value "1500m" is invalid, must be an integer`,
		func(p *corev1.Pod) { p.Spec.Overhead = mem("1500m") }},
	{"fractional ephemeral-storage overhead", `spec.overhead[ephemeral-storage]: fractional byte value`,
		func(p *corev1.Pod) {
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("0.5")}
		}},
	{"pod seccomp annotation", `metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead`,
		func(p *corev1.Pod) { annotate(p, corev1.SeccompPodAnnotationKey, "runtime/default") }},
	{"container seccomp annotation", `metadata.annotations[container.seccomp.security.alpha.kubernetes.io/app]: non-functional in v1.27+`,
		func(p *corev1.Pod) { annotate(p, corev1.SeccompContainerAnnotationKeyPrefix+"app", "runtime/default") }},
	{"container AppArmor annotation (templates only)", `metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: deprecated since v1.30`,
		func(p *corev1.Pod) {
			annotate(p, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+"app", "runtime/default")
		}},
	{"fractional memory limit", `spec.containers[0].resources.limits[memory]: fractional byte value "1500m"`,
		func(p *corev1.Pod) { app(p).Resources.Limits = mem("1.5") }},
	{"fractional memory request in an init container", `spec.initContainers[0].resources.requests[memory]: fractional byte value`,
		func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "i", Resources: corev1.ResourceRequirements{Requests: mem("100m")}}}
		}},
	{"fractional ephemeral storage in an ephemeral container", `spec.ephemeralContainers[0].resources.limits[ephemeral-storage]: fractional byte value`,
		func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "i",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1.5")}}}}}
		}},
	{"env hiding a previous definition", `spec.containers[0].env[1]: hides previous definition of "X", which may be dropped when using apply`,
		func(p *corev1.Pod) { app(p).Env = []corev1.EnvVar{{Name: "X", Value: "a"}, {Name: "X", Value: "b"}} }},
	{"hostIP without hostPort", `spec.containers[0].ports[0]: hostIP set without hostPort: {Name: HostPort:0 ContainerPort:80 Protocol:TCP HostIP:10.0.0.1}`,
		func(p *corev1.Pod) {
			app(p).Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP", HostIP: "10.0.0.1"}}
		}},
	{"duplicate port", `spec.containers[0].ports[1]: duplicate port definition with spec.containers[0].ports[0]`,
		func(p *corev1.Pod) {
			app(p).Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}, {ContainerPort: 80, Protocol: "TCP"}}
		}},
	{"overlapping port", `spec.containers[1].ports[0]: overlapping port definition with spec.containers[0].ports[0]`,
		func(p *corev1.Pod) {
			app(p).Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP", HostPort: 8080}}
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "i", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}}})
		}},
	{"ambiguous port", `spec.containers[0].ports[1]: dangerously ambiguous port definition with spec.containers[0].ports[0]`,
		func(p *corev1.Pod) {
			app(p).Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP", HostPort: 8080, HostIP: "10.0.0.1"}, {ContainerPort: 80, Protocol: "TCP", HostPort: 8080}}
		}},
	{"duplicate port name", `spec.containers[0].ports[1]: duplicate port name "http" with spec.initContainers[0].ports[0], services and probes that select ports by name will use spec.initContainers[0].ports[0]`,
		func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "i", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 81, Protocol: "TCP"}}}}
			app(p).Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}, {Name: "http", ContainerPort: 82, Protocol: "TCP"}}
		}},
	{"negative grace period", "spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
		func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](-5) }},
	{"pod affinity without selector", "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector",
		func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "k"}}}}
		}},
	{"preferred pod anti-affinity without selector", "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector: a null",
		func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
				{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "k"}}}}}
		}},
	{"non-canonical nameserver", `spec.dnsConfig.nameservers[0]: non-standard IP address "010.0.0.1" is invalid: use "10.0.0.1"`,
		func(p *corev1.Pod) { p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"010.0.0.1"}} }},
	{"non-canonical host alias", `spec.hostAliases[0].ip: non-standard IP address "::ffff:1.2.3.4" is invalid: use "1.2.3.4"`,
		func(p *corev1.Pod) { p.Spec.HostAliases = []corev1.HostAlias{{IP: "::ffff:1.2.3.4"}} }},
}

func volume(s corev1.VolumeSource) func(p *corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "v", VolumeSource: s})
	}
}

// TestEachPodWarningLikeUpstream: each of upstream's pod warnings, given by
// a Pod create and by every kind's template on create and on an update
// that changed the template (not on one that did not), is upstream's text.
func TestEachPodWarningLikeUpstream(t *testing.T) {
	c := newComparer(t)
	for _, tc := range podCases {
		old, p := basePod(), basePod()
		tc.set(p)
		p.Generation = 2
		for _, k := range kinds {
			created := c.compare(k, tc.name+" (create)", k.wrap(p), nil)
			updated := c.compare(k, tc.name+" (update)", k.wrap(p), k.wrap(old))
			c.compare(k, tc.name+" (unchanged)", k.wrap(old), k.wrap(old))
			var texts []string
			for _, w := range append(created, updated...) {
				if k.root != "" {
					w = strings.ReplaceAll(w, k.root, "")
				}
				texts = append(texts, w)
			}
			appArmorOnPod := k.name == "Pod" && strings.Contains(tc.name, "AppArmor")
			if found := containsPart(texts, tc.want); found == appArmorOnPod {
				t.Errorf("%s %s: upstream's warnings %q, want one with %q", k.name, tc.name, texts, tc.want)
			}
		}
	}
}

func containsPart(texts []string, part string) bool {
	for _, w := range texts {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

// TestKindWarningsLikeUpstream: the warnings the strategies add of their
// own, and their update rules.
func TestKindWarningsLikeUpstream(t *testing.T) {
	c := newComparer(t)
	bad := basePod()
	bad.Spec.NodeSelector = map[string]string{"beta.kubernetes.io/arch": "amd64"}
	named := func(name string) *corev1.Pod {
		p := bad.DeepCopy()
		p.Name = name
		return p
	}
	for _, k := range kinds {
		for _, name := range []string{"web.v1", "Web", "a-very-long-name-that-is-still-a-subdomain-but-far-longer-than-sixty-three-chars"} {
			c.compare(k, "name "+name, k.wrap(named(name)), nil)
		}
	}
	rc := kinds[2]
	newer := basePod()
	newer.Generation = 2
	if w := c.compare(rc, "update from a warning template", rc.wrap(newer), rc.wrap(bad)); len(w) == 0 {
		t.Errorf("upstream's ReplicationController update gave no warnings of the old template")
	}
	sts := func(gen int64, limit int32) runtime.Object {
		p := bad.DeepCopy()
		p.Generation = gen
		ss := kinds[6].wrap(p).(*appsv1.StatefulSet)
		ss.Spec.RevisionHistoryLimit = ptr.To(limit)
		var claim corev1.PersistentVolumeClaim
		claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1.5Gi")}
		claim.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2.5")}
		ss.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{claim}
		return ss
	}
	c.compare(kinds[6], "claims and history (create)", sts(1, -1), nil)
	c.compare(kinds[6], "claims and history (update)", sts(2, -1), sts(1, 3))
	c.compare(kinds[6], "claims and history (unchanged)", sts(1, -1), sts(1, -1))
	indexed := func(k kind, gen int64, schedule string) runtime.Object {
		p := basePod()
		p.Generation = gen
		obj := k.wrap(p)
		spec := &batchv1.JobSpec{}
		switch o := obj.(type) {
		case *batchv1.Job:
			spec = &o.Spec
		case *batchv1.CronJob:
			spec = &o.Spec.JobTemplate.Spec
			o.Spec.Schedule = schedule
		}
		spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		spec.Completions, spec.Parallelism = ptr.To[int32](200_000), ptr.To[int32](20_000)
		return obj
	}
	for _, k := range kinds[7:] {
		c.compare(k, "large indexed job (create)", indexed(k, 1, "* * * * *"), nil)
		c.compare(k, "large indexed job (update)", indexed(k, 2, "TZ=UTC * * * * *"), indexed(k, 1, "TZ=UTC * * * * *"))
		c.compare(k, "time zone (unchanged)", indexed(k, 1, "CRON_TZ=UTC * * * * *"), indexed(k, 1, "CRON_TZ=UTC * * * * *"))
	}
	t.Logf("%d writes compared, %d with warnings", c.compared, c.warned)
}
