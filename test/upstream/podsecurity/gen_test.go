package podsecurity

import (
	"fmt"
	"math/rand/v2"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
)

// gen draws pods, namespaces and requests from a small vocabulary full of
// the values the checks look at, with a fixed seed.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{r: rand.New(rand.NewPCG(seed, 1))} }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func pick[T any](g *gen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

const prefix = "pod-security.kubernetes.io/"

var (
	levels   = []string{"", "privileged", "baseline", "restricted", "bogus", "Baseline"}
	versions = []string{"", "latest", "v1.0", "v1.22", "v1.24", "v1.25", "v1.26", "v1.28", "v1.30", "v1.31", "v1.33", "v1.34",
		"v1.35", "v1.36", "v1.37", "v1.40", "1.30", "v2.0", "bogus"}
)

// labels draws a set of pod-security labels; valid ones mostly.
func (g *gen) labels() map[string]string {
	l := map[string]string{"team": "a"}
	for _, mode := range []string{"enforce", "audit", "warn"} {
		if lv := pick(g, levels...); lv != "" && (g.chance(0.7) || lv == "privileged") {
			if lv == "bogus" || lv == "Baseline" {
				if !g.chance(0.3) {
					lv = "baseline"
				}
			}
			l[prefix+mode] = lv
		}
		if v := pick(g, versions...); v != "" && g.chance(0.5) {
			if v == "bogus" || v == "1.30" || v == "v2.0" {
				if !g.chance(0.3) {
					v = "latest"
				}
			}
			l[prefix+mode+"-version"] = v
		}
	}
	return l
}

func namespace(name string, l map[string]string) *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
}

var (
	capabilities = []corev1.Capability{"NET_RAW", "SYS_ADMIN", "CHOWN", "NET_BIND_SERVICE", "ALL", "KILL", "SYS_TIME", "AUDIT_WRITE", "net_raw"}
	sysctls      = []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_local_reserved_ports",
		"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_rmem", "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat",
		"kernel.msgmax", "net.core.somaxconn"}
	seLinuxTypes = []string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t", "spc_t"}
)

func (g *gen) seccomp() *corev1.SeccompProfile {
	switch g.r.IntN(5) {
	case 0:
		return &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	case 1:
		return &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}
	case 2:
		return &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
	}
	return nil
}

func (g *gen) appArmor() *corev1.AppArmorProfile {
	switch g.r.IntN(6) {
	case 0:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	case 1:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("p")}
	case 2:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	}
	return nil
}

func (g *gen) seLinux() *corev1.SELinuxOptions {
	if !g.chance(0.2) {
		return nil
	}
	o := &corev1.SELinuxOptions{Type: pick(g, seLinuxTypes...), Level: pick(g, "", "s0:c1,c2")}
	if g.chance(0.2) {
		o.User = "system_u"
	}
	if g.chance(0.2) {
		o.Role = "system_r"
	}
	return o
}

func (g *gen) boolPtr(p float64) *bool {
	if !g.chance(p) {
		return nil
	}
	return ptr.To(g.chance(0.5))
}

func (g *gen) handler() *corev1.ProbeHandler {
	switch g.r.IntN(4) {
	case 0:
		return &corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80), Host: pick(g, "", "", "10.0.0.1")}}
	case 1:
		return &corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80), Host: pick(g, "", "localhost")}}
	}
	return nil
}

func (g *gen) container(name string) corev1.Container {
	c := corev1.Container{Name: name, Image: pick(g, "img:1", "img:2")}
	if g.chance(0.2) {
		c.Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: pick[int32](g, 0, 8080)}}
	}
	if h := g.handler(); h != nil && g.chance(0.3) {
		c.LivenessProbe = &corev1.Probe{ProbeHandler: *h}
	}
	if h := g.handler(); h != nil && g.chance(0.2) {
		c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{HTTPGet: h.HTTPGet, TCPSocket: h.TCPSocket}}
	}
	if !g.chance(0.8) {
		return c
	}
	sc := &corev1.SecurityContext{
		Privileged:               g.boolPtr(0.2),
		AllowPrivilegeEscalation: g.boolPtr(0.6),
		RunAsNonRoot:             g.boolPtr(0.4),
		SeccompProfile:           g.seccomp(),
		AppArmorProfile:          g.appArmor(),
		SELinuxOptions:           g.seLinux(),
	}
	if g.chance(0.3) {
		sc.RunAsUser = ptr.To(pick[int64](g, 0, 1000))
	}
	if g.chance(0.7) {
		sc.Capabilities = &corev1.Capabilities{}
		for range g.r.IntN(3) {
			sc.Capabilities.Add = append(sc.Capabilities.Add, pick(g, capabilities...))
		}
		if g.chance(0.7) {
			sc.Capabilities.Drop = []corev1.Capability{pick[corev1.Capability](g, "ALL", "ALL", "NET_RAW", "all")}
		}
	}
	if g.chance(0.1) {
		sc.ProcMount = ptr.To(pick(g, corev1.DefaultProcMount, corev1.UnmaskedProcMount))
	}
	if g.chance(0.05) {
		sc.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: g.boolPtr(1)}
	}
	c.SecurityContext = sc
	return c
}

func (g *gen) volume(i int) corev1.Volume {
	v := corev1.Volume{Name: fmt.Sprintf("v%d", i)}
	switch g.r.IntN(10) {
	case 0:
		v.HostPath = &corev1.HostPathVolumeSource{Path: "/var"}
	case 1:
		v.NFS = &corev1.NFSVolumeSource{Server: "s", Path: "/"}
	case 2:
		v.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}
	case 3:
		v.Secret = &corev1.SecretVolumeSource{SecretName: "s"}
	case 4:
		v.Projected = &corev1.ProjectedVolumeSource{}
	case 5:
		v.CSI = &corev1.CSIVolumeSource{Driver: "d"}
	case 6:
		v.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}
	case 7:
		v.GitRepo = &corev1.GitRepoVolumeSource{Repository: "r"}
	case 8:
		v.Image = &corev1.ImageVolumeSource{Reference: "img"}
	default:
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	return v
}

// pod draws a pod of namespace ns named name (generateName when name is
// empty).
func (g *gen) pod(ns, name string) *corev1.Pod {
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if name == "" {
		p.GenerateName = "gen-"
	}
	s := &p.Spec
	s.HostNetwork, s.HostPID, s.HostIPC = g.chance(0.1), g.chance(0.05), g.chance(0.05)
	if g.chance(0.1) {
		s.HostUsers = ptr.To(false)
	}
	if g.chance(0.1) {
		s.RuntimeClassName = ptr.To(pick(g, "kata", "runc"))
	}
	if g.chance(0.1) {
		s.OS = &corev1.PodOS{Name: pick(g, corev1.Windows, corev1.Linux)}
	}
	if g.chance(0.7) {
		psc := &corev1.PodSecurityContext{RunAsNonRoot: g.boolPtr(0.5), SeccompProfile: g.seccomp(), AppArmorProfile: g.appArmor(), SELinuxOptions: g.seLinux()}
		if g.chance(0.3) {
			psc.RunAsUser = ptr.To(pick[int64](g, 0, 1000))
		}
		for range g.r.IntN(2) {
			psc.Sysctls = append(psc.Sysctls, corev1.Sysctl{Name: pick(g, sysctls...), Value: "1"})
		}
		if g.chance(0.05) {
			psc.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
		}
		s.SecurityContext = psc
	}
	for i := range 1 + g.r.IntN(2) {
		s.Containers = append(s.Containers, g.container(fmt.Sprintf("c%d", i)))
	}
	if g.chance(0.3) {
		s.InitContainers = append(s.InitContainers, g.container("init"))
	}
	if g.chance(0.1) {
		s.EphemeralContainers = append(s.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon(g.container("debug"))})
	}
	for i := range g.r.IntN(3) {
		s.Volumes = append(s.Volumes, g.volume(i))
	}
	if g.chance(0.15) {
		p.Annotations = map[string]string{
			"container.apparmor.security.beta.kubernetes.io/c0": pick(g, "runtime/default", "localhost/p", "unconfined"),
		}
	}
	if g.chance(0.05) {
		// a pod that is fully restricted-compliant, as a controlled mix
		restrict(p)
	}
	return p
}

// restrict makes p pass every restricted check.
func restrict(p *corev1.Pod) {
	s := &p.Spec
	s.HostNetwork, s.HostPID, s.HostIPC, s.Volumes, s.OS = false, false, false, nil, nil
	s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	p.Annotations = nil
	fix := func(c *corev1.Container) {
		c.Ports, c.LivenessProbe, c.Lifecycle = nil, nil, nil
		c.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	}
	for i := range s.Containers {
		fix(&s.Containers[i])
	}
	for i := range s.InitContainers {
		fix(&s.InitContainers[i])
	}
	for i := range s.EphemeralContainers {
		fix((*corev1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon))
	}
}

// owned gives p one of three controllers (or none).
func (g *gen) owned(p *corev1.Pod) {
	if n := g.r.IntN(4); n > 0 {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: fmt.Sprintf("rs%d", n),
			UID: types.UID(fmt.Sprintf("uid-%d", n)), Controller: ptr.To(g.chance(0.9))}}
	}
}

var (
	podsGVR       = corev1.SchemeGroupVersion.WithResource("pods")
	namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
)

// request is one request: its attributes as admitd's server fills them.
func request(op admission.Operation, gvr schema.GroupVersionResource, sub string, kind schema.GroupVersionKind, ns, name string, obj, old runtime.Object, username string) *admission.Attributes {
	a := &admission.Attributes{Operation: op, Resource: gvr, Subresource: sub, Kind: kind, Namespace: ns, Name: name, Object: obj, OldObject: old,
		UserInfo: authenticationv1.UserInfo{Username: username, Groups: []string{"system:authenticated"}}}
	switch op {
	case admission.Create:
		a.Options = &metav1.CreateOptions{}
	case admission.Update:
		a.Options = &metav1.UpdateOptions{}
	}
	return a
}

func podCreate(p *corev1.Pod, user string) *admission.Attributes {
	return request(admission.Create, podsGVR, "", corev1.SchemeGroupVersion.WithKind("Pod"), p.Namespace, p.Name, p, nil, user)
}

func podUpdate(p, old *corev1.Pod, sub, user string) *admission.Attributes {
	return request(admission.Update, podsGVR, sub, corev1.SchemeGroupVersion.WithKind("Pod"), p.Namespace, p.Name, p, old, user)
}

func namespaceWrite(op admission.Operation, ns, old *corev1.Namespace, user string) *admission.Attributes {
	a := request(op, namespacesGVR, "", corev1.SchemeGroupVersion.WithKind("Namespace"), ns.Name, ns.Name, ns, nil, user)
	if old != nil {
		a.OldObject = old
	}
	return a
}

// workload wraps the pod's metadata and spec in a template of one of the
// eight workload kinds.
func workload(i int, p *corev1.Pod) (runtime.Object, schema.GroupVersionResource) {
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}, Annotations: p.Annotations}, Spec: p.Spec}
	meta := metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, GenerateName: p.GenerateName}
	apps := func(r string) schema.GroupVersionResource { return appsv1.SchemeGroupVersion.WithResource(r) }
	switch i % 8 {
	case 0:
		return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Template: tmpl}}, apps("deployments")
	case 1:
		return &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"}, ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Template: tmpl}}, apps("replicasets")
	case 2:
		return &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}, ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Template: tmpl}}, apps("statefulsets")
	case 3:
		return &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"}, ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Template: tmpl}}, apps("daemonsets")
	case 4:
		return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta, Spec: batchv1.JobSpec{Template: tmpl}}, batchv1.SchemeGroupVersion.WithResource("jobs")
	case 5:
		return &batchv1.CronJob{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"}, ObjectMeta: meta,
			Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}}}, batchv1.SchemeGroupVersion.WithResource("cronjobs")
	case 6:
		return &corev1.ReplicationController{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"}, ObjectMeta: meta,
			Spec: corev1.ReplicationControllerSpec{Template: &tmpl}}, corev1.SchemeGroupVersion.WithResource("replicationcontrollers")
	default:
		return &corev1.PodTemplate{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodTemplate"}, ObjectMeta: meta, Template: tmpl}, corev1.SchemeGroupVersion.WithResource("podtemplates")
	}
}

func workloadWrite(op admission.Operation, obj, old runtime.Object, gvr schema.GroupVersionResource, sub, ns, name, user string) *admission.Attributes {
	return request(op, gvr, sub, obj.GetObjectKind().GroupVersionKind(), ns, name, obj, old, user)
}
