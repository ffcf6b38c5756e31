package serviceaccount

import (
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
)

const tokenPath = "/var/run/secrets/kubernetes.io/serviceaccount"

func pod(edit ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "myname", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	for _, e := range edit {
		e(p)
	}
	return p
}

func create(name string, p *corev1.Pod) request {
	return request{name: name, op: admission.Create, resource: "pods", namespace: p.Namespace, obj: p}
}

func secretEnv(secret string) corev1.EnvVar {
	return corev1.EnvVar{Name: "env-1", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "k"}}}
}

func secretEnvFrom(secret string) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secret}}}
}

func secretVolume(name, secret string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}
}

var mirror = func(p *corev1.Pod) { p.Annotations = map[string]string{"kubernetes.io/config.mirror": "mirror"} }

func withSA(name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.ServiceAccountName = name }
}

// upstreamCases are the cases of upstream's admission_test.go, on v1
// pods; the global LimitSecretReferences of some is the account
// annotation here (admitd, like kube-apiserver, has it off).
func upstreamCases() []request {
	rs := []request{
		{name: "ignores update", op: admission.Update, resource: "pods", namespace: ns, obj: pod(), old: pod()},
		{name: "ignores delete", op: admission.Delete, resource: "pods", namespace: ns, old: pod()},
		{name: "ignores connect", op: admission.Connect, resource: "pods", subresource: "exec", namespace: ns},
		{name: "ignores non-pod resource", op: admission.Create, resource: "customresources", namespace: ns, obj: pod()},
		{name: "ignores nil object", op: admission.Create, resource: "pods", namespace: ns},
		{name: "ignores non-pod object", op: admission.Create, resource: "pods", namespace: ns, obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n"}}},
		{name: "ignores pod status", op: admission.Create, resource: "pods", subresource: "status", namespace: ns, obj: pod()},
		create("ignores mirror pod", pod(mirror)),
		create("mirror pod with service account", pod(mirror, withSA("default"))),
		create("mirror pod with secret volume", pod(mirror, func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{secretVolume("v", "mysecret")} })),
		create("mirror pod with token projection", pod(mirror, func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}}}
		})),
		create("default account and bound token", pod()),
		create("fetches uncached account", pod(func(p *corev1.Pod) { p.Namespace = fresh })),
		create("denies missing default account", pod(func(p *corev1.Pod) { p.Namespace = missing })),
		create("denies missing named account", pod(withSA("nobody"))),
		create("automounts in init containers", pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "i"}}
		})),
		create("respects existing mount", pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "my-custom-mount", MountPath: tokenPath}}
		})),
		create("respects existing mount in init containers", pod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "i", VolumeMounts: []corev1.VolumeMount{{Name: "my-custom-mount", MountPath: tokenPath}}}}
		})),
		create("allowed referenced secret volume", pod(withSA("strict"), func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{secretVolume("v", "s1")} })),
		create("allowed referenced secret env", pod(withSA("strict"), func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{secretEnv("s1")} })),
		create("allowed referenced secret envFrom", pod(withSA("strict"), func(p *corev1.Pod) { p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{secretEnvFrom("s1")} })),
		create("rejects unreferenced secret volume", pod(withSA("strict"), func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{secretVolume("v", "s2")} })),
		create("rejects unreferenced secret env", pod(withSA("strict"), func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{secretEnv("s2")} })),
		create("rejects unreferenced secret envFrom", pod(withSA("strict"), func(p *corev1.Pod) { p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{secretEnvFrom("s2")} })),
		create("rejects unreferenced init secret env", pod(withSA("strict"), func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "i", Env: []corev1.EnvVar{secretEnv("s2")}}}
		})),
		create("rejects unreferenced init secret envFrom", pod(withSA("strict"), func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "i", EnvFrom: []corev1.EnvFromSource{secretEnvFrom("s2")}}}
		})),
		create("permissive account allows unreferenced secrets", pod(withSA("default"), func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{secretVolume("v", "s2")} })),
		create("allows referenced image pull secrets", pod(withSA("strict"), func(p *corev1.Pod) { p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "p1"}} })),
		create("rejects unreferenced image pull secrets", pod(withSA("strict"), func(p *corev1.Pod) { p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "p2"}} })),
		create("does not add image pull secrets", pod(withSA("puller"), func(p *corev1.Pod) { p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mine"}} })),
		create("adds image pull secrets", pod(withSA("puller"))),
	}
	for _, ec := range []struct {
		name string
		c    corev1.EphemeralContainerCommon
	}{
		{"ephemeral env allowed", corev1.EphemeralContainerCommon{Name: "e", Image: "i", Env: []corev1.EnvVar{secretEnv("s1")}}},
		{"ephemeral envFrom allowed", corev1.EphemeralContainerCommon{Name: "e", Image: "i", EnvFrom: []corev1.EnvFromSource{secretEnvFrom("s1")}}},
		{"ephemeral env rejected", corev1.EphemeralContainerCommon{Name: "e", Image: "i", Env: []corev1.EnvVar{secretEnv("s2")}}},
		{"ephemeral envFrom rejected", corev1.EphemeralContainerCommon{Name: "e", Image: "i", EnvFrom: []corev1.EnvFromSource{secretEnvFrom("s2")}}},
	} {
		p := pod(withSA("strict"), func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: ec.c}}
		})
		rs = append(rs, request{name: ec.name, op: admission.Update, resource: "pods", subresource: "ephemeralcontainers", namespace: ns, obj: p, old: pod(withSA("strict"))})
	}
	rs = append(rs,
		request{name: "ephemeral without account", op: admission.Update, resource: "pods", subresource: "ephemeralcontainers", namespace: ns, obj: pod(), old: pod()},
		request{name: "ephemeral with missing account", op: admission.Update, resource: "pods", subresource: "ephemeralcontainers", namespace: ns, obj: pod(withSA("nobody")), old: pod(withSA("nobody"))},
	)
	return rs
}

func TestUpstreamCases(t *testing.T) {
	w := newWorld()
	w.build(t)
	for _, r := range upstreamCases() {
		w.compare(t, r)
	}
}

// gen makes random pods over a small vocabulary of edge cases.
type gen struct{ r *rand.Rand }

func (g gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g gen) chance(p float64) bool    { return g.r.Float64() < p }

var secrets = []string{"s1", "s2", "s3", ""}

func (g gen) container(name string) corev1.Container {
	c := corev1.Container{Name: name, Image: "i"}
	for range g.r.IntN(3) {
		switch g.r.IntN(3) {
		case 0:
			c.Env = append(c.Env, corev1.EnvVar{Name: g.pick("A", "B"), Value: "v"})
		case 1:
			c.Env = append(c.Env, secretEnv(g.pick(secrets...)))
		case 2:
			c.EnvFrom = append(c.EnvFrom, secretEnvFrom(g.pick(secrets...)))
		}
	}
	if g.chance(0.2) {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: g.pick("data", "kube-api-access-mine"), MountPath: g.pick(tokenPath, "/data", tokenPath+"/")})
	}
	return c
}

func (g gen) volume(i int) corev1.Volume {
	name := g.pick("data", "cfg", "sec") + string(rune('a'+i))
	switch g.r.IntN(7) {
	case 0:
		return secretVolume(name, g.pick(secrets...))
	case 1:
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}
	case 2:
		return corev1.Volume{Name: g.pick("kube-api-access-mine", "kube-api-access-", "kube-api-access-abcde", "kube-api-accessx"), VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	case 3:
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: g.pick(secrets...)}}}}}}}
	case 4:
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}}
	case 5:
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d",
			NodePublishSecretRef: &corev1.LocalObjectReference{Name: g.pick(secrets...)}}}}
	default:
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
}

func (g gen) pod() *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: g.pick("p", "q", ""), GenerateName: "gen-", Namespace: ns}}
	if g.chance(0.05) {
		p.Namespace = fresh
	}
	if g.chance(0.15) {
		mirror(p)
	}
	p.Spec.ServiceAccountName = g.pick(accountNames...)
	if g.chance(0.1) {
		p.Spec.DeprecatedServiceAccount = g.pick(accountNames...)
	}
	switch g.r.IntN(4) {
	case 0:
		p.Spec.AutomountServiceAccountToken = ptr.To(false)
	case 1:
		p.Spec.AutomountServiceAccountToken = ptr.To(true)
	}
	for i := range g.r.IntN(3) {
		p.Spec.InitContainers = append(p.Spec.InitContainers, g.container("i"+string(rune('0'+i))))
	}
	for i := range 1 + g.r.IntN(3) {
		p.Spec.Containers = append(p.Spec.Containers, g.container("c"+string(rune('0'+i))))
	}
	if g.chance(0.2) {
		e := g.container("e")
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: e.Name, Image: e.Image, Env: e.Env, EnvFrom: e.EnvFrom, VolumeMounts: e.VolumeMounts}}}
	}
	for i := range g.r.IntN(3) {
		p.Spec.Volumes = append(p.Spec.Volumes, g.volume(i))
	}
	for range g.r.IntN(3) {
		p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: g.pick("p1", "p2", "p3", "")})
	}
	return p
}

func (g gen) request(i int) request {
	p := g.pod()
	switch n := g.r.IntN(10); {
	case n < 7:
		return request{name: "generated create", op: admission.Create, resource: "pods", namespace: p.Namespace, obj: p}
	case n < 9:
		return request{name: "generated ephemeral update", op: admission.Update, resource: "pods", subresource: "ephemeralcontainers", namespace: p.Namespace, obj: p, old: g.pod()}
	default:
		sub := g.pick("", "status", "binding")
		return request{name: "generated update " + sub, op: admission.Update, resource: "pods", subresource: sub, namespace: p.Namespace, obj: p, old: g.pod()}
	}
}

const generatedRequests = 3000

// TestGenerated compares generated requests; the outcomes must stay
// varied (a generator that broke would leave few).
func TestGenerated(t *testing.T) {
	w := newWorld()
	w.build(t)
	g := gen{rand.New(rand.NewPCG(1, 2))}
	outcomes := map[string]int{}
	for i := range generatedRequests {
		r := g.request(i)
		outcomes[w.compare(t, r)]++
	}
	if len(outcomes) < 25 {
		t.Errorf("%d distinct outcomes, want at least 25", len(outcomes))
	}
	t.Logf("%d generated requests compared, %d distinct outcomes", generatedRequests, len(outcomes))
	if testing.Verbose() {
		for o, n := range outcomes {
			t.Logf("%4d %s", n, o)
		}
	}
}
