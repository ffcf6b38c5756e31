package podsecurity

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// cluster is an honest in-memory stand-in for the server's namespace
// lookup and pod cache.
type cluster struct {
	namespaces map[string]*corev1.Namespace
	pods       []*corev1.Pod
	listErr    error
}

func (c *cluster) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := c.namespaces[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

func (c *cluster) GetCachedObject(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	if gvr == namespacesGVR {
		return c.GetNamespace(ctx, name)
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (c *cluster) ListCachedObjects(_ context.Context, gvr schema.GroupVersionResource, namespace string, _ labels.Selector) ([]runtime.Object, error) {
	if gvr != podsGVR {
		return nil, nil
	}
	if c.listErr != nil {
		return nil, c.listErr
	}
	var out []runtime.Object
	for _, p := range c.pods {
		if p.Namespace == namespace {
			out = append(out, p)
		}
	}
	return out, nil
}

func ns(name string, lbls ...string) *corev1.Namespace {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(lbls); i += 2 {
		n.Labels["pod-security.kubernetes.io/"+lbls[i]] = lbls[i+1]
	}
	return n
}

func newCluster(nss ...*corev1.Namespace) *cluster {
	c := &cluster{namespaces: map[string]*corev1.Namespace{}}
	for _, n := range nss {
		c.namespaces[n.Name] = n
	}
	return c
}

func mustPlugin(t *testing.T, c *cluster, config string) *Plugin {
	t.Helper()
	pc := admission.PluginContext{Namespaces: c, Cache: c}
	if config != "" {
		pc.Config = strings.NewReader(config)
	}
	p, err := newPlugin(pc, nil)
	if err != nil {
		t.Fatalf("newPlugin() = %v", err)
	}
	return p
}

type podOpt func(*corev1.Pod)

func pod(namespace, name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func hostNetwork(p *corev1.Pod) { p.Spec.HostNetwork = true }

func restrictedSafe(p *corev1.Pod) {
	p.Spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	for i := range p.Spec.Containers {
		p.Spec.Containers[i].SecurityContext = &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		}
	}
}

func runtimeClass(name string) podOpt {
	return func(p *corev1.Pod) { p.Spec.RuntimeClassName = &name }
}

func owned(uid string) podOpt {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: types.UID(uid), Controller: ptr.To(true)}}
	}
}

const (
	hostNetworkDetail = `host namespaces (hostNetwork=true)`
	restrictedDetail  = `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
		`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
)

func TestPods(t *testing.T) {
	c := newCluster(
		ns("plain"),
		ns("base", "enforce", "baseline"),
		ns("pinned", "enforce", "baseline", "enforce-version", "v1.30"),
		ns("warn", "warn", "restricted"),
		ns("audit", "audit", "restricted", "audit-version", "v1.25"),
		ns("restricted", "enforce", "restricted"),
		ns("bad", "enforce", "bogus"),
		ns("exempt", "enforce", "restricted"),
	)
	p := mustPlugin(t, c, `apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
exemptions:
  usernames: [admin]
  runtimeClasses: [kata]
  namespaces: [exempt]
`)
	anns := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m["pod-security.kubernetes.io/"+kv[i]] = kv[i+1]
		}
		return m
	}
	noName := pod("base", "", hostNetwork)
	noName.GenerateName = "gen-"
	cases := []admissiontest.Case{{
		Name:            "privileged namespace",
		Attributes:      admissiontest.Create(pod("plain", "p", hostNetwork)).Attributes(),
		WantAnnotations: anns("enforce-policy", "privileged:latest"),
	}, {
		Name:            "baseline violation",
		Attributes:      admissiontest.Create(pod("base", "p", hostNetwork)).Attributes(),
		WantErr:         `pods "p" is forbidden: violates PodSecurity "baseline:latest": ` + hostNetworkDetail,
		WantCode:        403,
		WantAnnotations: anns("enforce-policy", "baseline:latest"),
	}, {
		Name:            "generateName",
		Attributes:      admissiontest.Create(noName).Attributes(),
		WantErr:         `pods is forbidden: violates PodSecurity "baseline:latest": ` + hostNetworkDetail,
		WantCode:        403,
		WantAnnotations: anns("enforce-policy", "baseline:latest"),
	}, {
		Name:            "pinned version",
		Attributes:      admissiontest.Create(pod("pinned", "p", hostNetwork)).Attributes(),
		WantErr:         `pods "p" is forbidden: violates PodSecurity "baseline:v1.30": ` + hostNetworkDetail,
		WantCode:        403,
		WantAnnotations: anns("enforce-policy", "baseline:v1.30"),
	}, {
		Name:            "baseline compliant",
		Attributes:      admissiontest.Create(pod("base", "p")).Attributes(),
		WantAnnotations: anns("enforce-policy", "baseline:latest"),
	}, {
		Name:            "warn",
		Attributes:      admissiontest.Create(pod("warn", "p")).Attributes(),
		WantWarnings:    []string{`would violate PodSecurity "restricted:latest": ` + restrictedDetail},
		WantAnnotations: anns("enforce-policy", "privileged:latest"),
	}, {
		Name:       "audit",
		Attributes: admissiontest.Create(pod("audit", "p")).Attributes(),
		WantAnnotations: anns("enforce-policy", "privileged:latest",
			"audit-violations", `would violate PodSecurity "restricted:v1.25": `+restrictedDetail),
	}, {
		Name:            "enforce restricted implies warn",
		Attributes:      admissiontest.Create(pod("restricted", "p", restrictedSafe)).Attributes(),
		WantAnnotations: anns("enforce-policy", "restricted:latest"),
	}, {
		Name:            "invalid level enforces restricted",
		Attributes:      admissiontest.Create(pod("bad", "p")).Attributes(),
		WantErr:         `pods "p" is forbidden: violates PodSecurity "restricted:latest": ` + restrictedDetail,
		WantCode:        403,
		WantAnnotations: anns("enforce-policy", "restricted:latest", "error", `Failed to parse policy: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`),
	}, {
		Name:            "exempt namespace",
		Attributes:      admissiontest.Create(pod("exempt", "p", hostNetwork)).Attributes(),
		WantAnnotations: anns("exempt", "namespace"),
	}, {
		Name:            "exempt user",
		Attributes:      admissiontest.Create(pod("base", "p", hostNetwork)).User("admin").Attributes(),
		WantAnnotations: anns("exempt", "user"),
	}, {
		Name:            "exempt runtime class",
		Attributes:      admissiontest.Create(pod("base", "p", hostNetwork, runtimeClass("kata"))).Attributes(),
		WantAnnotations: anns("exempt", "runtimeClass"),
	}, {
		Name:            "missing namespace",
		Attributes:      admissiontest.Create(pod("gone", "p")).Attributes(),
		WantErr:         `Internal error occurred: failed to lookup namespace "gone"`,
		WantCode:        500,
		WantAnnotations: anns("error", `Internal error occurred: failed to lookup namespace "gone": namespaces "gone" not found`),
	}, {
		Name:       "insignificant update",
		Attributes: admissiontest.Update(pod("base", "p", hostNetwork, func(p *corev1.Pod) { p.Labels = map[string]string{"a": "b"} }), pod("base", "p", hostNetwork)).Attributes(),
	}, {
		Name:            "image update",
		Attributes:      admissiontest.Update(pod("base", "p", hostNetwork, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "new" }), pod("base", "p", hostNetwork)).Attributes(),
		WantErr:         `pods "p" is forbidden: violates PodSecurity "baseline:latest": ` + hostNetworkDetail,
		WantCode:        403,
		WantAnnotations: anns("enforce-policy", "baseline:latest"),
	}, {
		Name:       "status ignored",
		Attributes: admissiontest.Update(pod("base", "p", hostNetwork, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "new" }), pod("base", "p", hostNetwork)).Resource(podsGVR, "status").Attributes(),
	}, {
		Name: "ephemeral container added",
		Attributes: admissiontest.Update(pod("base", "p", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}
		}), pod("base", "p")).Resource(podsGVR, "ephemeralcontainers").Attributes(),
		WantErr:         `pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged (container "debug" must not set securityContext.privileged=true)`,
		WantCode:        403,
		WantAnnotations: anns("enforce-policy", "baseline:latest"),
	}}
	admissiontest.Run(t, p, cases)
}

func TestWorkloads(t *testing.T) {
	c := newCluster(ns("base", "enforce", "baseline", "warn", "baseline", "audit", "restricted"), ns("enforced", "enforce", "restricted"))
	p := mustPlugin(t, c, "")
	tmpl := pod("", "", hostNetwork)
	spec := corev1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	meta := func(ns string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: "w", Namespace: ns} }
	objs := []runtime.Object{
		&appsv1.Deployment{ObjectMeta: meta("base"), Spec: appsv1.DeploymentSpec{Template: spec}},
		&appsv1.ReplicaSet{ObjectMeta: meta("base"), Spec: appsv1.ReplicaSetSpec{Template: spec}},
		&appsv1.StatefulSet{ObjectMeta: meta("base"), Spec: appsv1.StatefulSetSpec{Template: spec}},
		&appsv1.DaemonSet{ObjectMeta: meta("base"), Spec: appsv1.DaemonSetSpec{Template: spec}},
		&batchv1.Job{ObjectMeta: meta("base"), Spec: batchv1.JobSpec{Template: spec}},
		&batchv1.CronJob{ObjectMeta: meta("base"), Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: spec}}}},
		&corev1.ReplicationController{ObjectMeta: meta("base"), Spec: corev1.ReplicationControllerSpec{Template: &spec}},
		&corev1.PodTemplate{ObjectMeta: meta("base"), Template: spec},
	}
	audit := `would violate PodSecurity "restricted:latest": ` + hostNetworkDetail + `, ` + restrictedDetail
	var cases []admissiontest.Case
	for _, o := range objs {
		a := admissiontest.Create(o).Attributes()
		cases = append(cases, admissiontest.Case{
			Name:            a.Resource.Resource,
			Attributes:      a,
			WantWarnings:    []string{`would violate PodSecurity "baseline:latest": ` + hostNetworkDetail},
			WantAnnotations: map[string]string{"pod-security.kubernetes.io/audit-violations": audit},
		})
	}
	cases = append(cases, admissiontest.Case{
		Name:         "enforce only warns",
		Attributes:   admissiontest.Create(&appsv1.Deployment{ObjectMeta: meta("enforced"), Spec: appsv1.DeploymentSpec{Template: spec}}).Attributes(),
		WantWarnings: []string{`would violate PodSecurity "restricted:latest": ` + hostNetworkDetail + `, ` + restrictedDetail},
	}, admissiontest.Case{
		Name:       "scale subresource",
		Attributes: admissiontest.Create(&appsv1.Deployment{ObjectMeta: meta("base"), Spec: appsv1.DeploymentSpec{Template: spec}}).Resource(appsv1.SchemeGroupVersion.WithResource("deployments"), "scale").Attributes(),
	}, admissiontest.Case{
		Name:            "missing namespace",
		Attributes:      admissiontest.Create(&appsv1.Deployment{ObjectMeta: meta("gone"), Spec: appsv1.DeploymentSpec{Template: spec}}).Attributes(),
		WantAnnotations: map[string]string{"pod-security.kubernetes.io/error": `failed to lookup namespace "gone": namespaces "gone" not found`},
	}, admissiontest.Case{
		Name:       "not applicable",
		Attributes: admissiontest.Create(&corev1.ConfigMap{ObjectMeta: meta("base")}).Attributes(),
	})
	admissiontest.Run(t, p, cases)
}

// BenchmarkValidatePod is a compliant pod create in a namespace enforcing
// restricted, the common case on a cluster that uses Pod Security.
func BenchmarkValidatePod(b *testing.B) {
	c := newCluster(ns("restricted", "enforce", "restricted", "warn", "restricted", "audit", "restricted"))
	p, err := newPlugin(admission.PluginContext{Namespaces: c, Cache: c}, nil)
	if err != nil {
		b.Fatal(err)
	}
	a := admissiontest.Create(pod("restricted", "p", restrictedSafe)).Attributes()
	b.ReportAllocs()
	for b.Loop() {
		a.Record = admission.NewRecord()
		if err := p.Validate(b.Context(), a); err != nil {
			b.Fatal(err)
		}
	}
}
