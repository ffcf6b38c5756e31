// Package chainbench measures the default admission plugin set on a Pod
// create, admitd's chain beside upstream's, in the same run: the plugins
// both run by default and admitd implements, built as each server builds
// them, over the same cluster state, each iteration admitting a fresh copy
// of the same pod through the mutating then the validating phase (the
// copies are made with the timer stopped: see admitEach).
//
//	cd test/upstream && go test ./chainbench -run - -bench . -benchmem -count 10 | tee /tmp/chain.txt
package chainbench

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	upadmission "k8s.io/apiserver/pkg/admission"
	genericinit "k8s.io/apiserver/pkg/admission/initializer"
	upmetrics "k8s.io/apiserver/pkg/admission/metrics"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/features"
	kubeadmission "k8s.io/kubernetes/pkg/kubeapiserver/admission"
	kubeoptions "k8s.io/kubernetes/pkg/kubeapiserver/options"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
	"github.com/admitd/admitd/pkg/admission/plugins/standard"
)

// notCompared are default plugins left out of both chains: the dynamic ones
// (webhooks and policies, whose upstream wiring needs a whole server) and
// ResourceQuota (measured on its own).
var notCompared = []string{"MutatingAdmissionPolicy", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota"}

// cluster is the state both chains read: a restricted namespace with a
// LimitRange, its default service account and a PriorityClass.
func cluster() []runtime.Object {
	q := resource.MustParse
	return []runtime.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{
			"kubernetes.io/metadata.name": "shop", "pod-security.kubernetes.io/enforce": "restricted"}},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "default"}},
		&corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "defaults"}, Spec: corev1.LimitRangeSpec{
			Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
				Default:        corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("256Mi")},
				DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")},
				Max:            corev1.ResourceList{corev1.ResourceCPU: q("2")}}}}},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "shop-high"}, Value: 100000},
	}
}

// pod is a pod the restricted level admits, defaulted as the server would.
func pod() *corev1.Pod {
	yes, no, uid := true, false, int64(1000)
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			PriorityClassName: "shop-high",
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &uid,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no,
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
			EnableServiceLinks: &yes,
		},
	}
	return p
}

// comparedPlugins are the default plugins admitd implements, less notCompared.
func comparedPlugins(tb testing.TB, r *admission.Registry) []string {
	names, err := r.Enabled(nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return slices.DeleteFunc(names, func(n string) bool { return slices.Contains(notCompared, n) })
}

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

func BenchmarkDefaultPluginsPodCreate(b *testing.B) {
	reg := standard.NewRegistry(standard.Options{})
	names := comparedPlugins(b, reg)
	b.Logf("plugins: %v", names)
	b.Run("admitd", func(b *testing.B) {
		admitEach(b, pod(), (*corev1.Pod).DeepCopy, newAdmitdChain(b, reg, names))
	})
	b.Run("admitd-server", func(b *testing.B) {
		admitEach(b, pod(), (*corev1.Pod).DeepCopy, newServerChain(b, reg, names))
	})
	b.Run("upstream", func(b *testing.B) {
		admit := newUpstreamChain(b, names)
		in := new(api.Pod)
		if err := legacyscheme.Scheme.Convert(pod(), in, nil); err != nil {
			b.Fatal(err)
		}
		admitEach(b, in, (*api.Pod).DeepCopy, admit)
	})
}

// newAdmitdChain builds admitd's chain of names over the cluster; the
// function it returns admits one pod, changing it in place.
func newAdmitdChain(tb testing.TB, reg *admission.Registry, names []string) func(*corev1.Pod) error {
	return newAdmitdChainOver(tb, reg, names, admissiontest.NewCluster(cluster()...).Plugins(admission.PluginContext{Context: tb.Context()}))
}

// newAdmitdChainOver builds admitd's chain of names reading the cluster
// through pc.
func newAdmitdChainOver(tb testing.TB, reg *admission.Registry, names []string, pc admission.PluginContext) func(*corev1.Pod) error {
	ctx := tb.Context()
	allow := admission.AuthorizerFunc(func(context.Context, admission.AuthorizationAttributes) (admission.AuthorizationDecision, string, error) {
		return admission.AuthorizationAllow, "", nil
	})
	pc.Authorizer = allow
	chain, err := reg.NewChain(names, pc, nil)
	if err != nil {
		tb.Fatal(err)
	}
	chain.WithMetrics(admission.NewMetrics(prometheus.NewRegistry()))
	u := authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}}
	return func(p *corev1.Pod) error {
		// As the server builds them (internal/apiserver/admit.go).
		a := &admission.Attributes{Name: p.Name, Namespace: p.Namespace, Resource: podsGVR,
			Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Operation: admission.Create, Options: &metav1.CreateOptions{},
			Object: p, UserInfo: u, Record: admission.NewRecord()}
		if err := chain.Admit(ctx, a); err != nil {
			return err
		}
		return chain.Validate(ctx, a)
	}
}

// newUpstreamChain builds upstream's chain of names as kube-apiserver does
// (its plugin initializers over informers of a fake clientset holding the
// cluster, the per-plugin metrics decorator); the function it returns
// admits one internal pod, changing it in place.
func newUpstreamChain(tb testing.TB, names []string) func(*api.Pod) error {
	ctx := tb.Context()
	client := fake.NewClientset(cluster()...)
	factory := informers.NewSharedInformerFactory(client, 0)
	plugins := upadmission.NewPlugins()
	kubeoptions.RegisterAllAdmissionPlugins(plugins)
	lifecycle.Register(plugins) // the generic server registers it
	initializers := upadmission.PluginInitializers{
		genericinit.New(client, nil, factory, authorizerfactory.NewAlwaysAllowAuthorizer(), utilfeature.DefaultFeatureGate,
			compatibility.DefaultBuildEffectiveVersion(), ctx.Done(), nil),
		kubeadmission.NewPluginInitializer(),
	}
	configs, err := upadmission.ReadAdmissionConfiguration(names, "", runtime.NewScheme())
	if err != nil {
		tb.Fatal(err)
	}
	chain, err := plugins.NewFromPlugins(names, configs, initializers, upadmission.DecoratorFunc(upmetrics.WithControllerMetrics))
	if err != nil {
		tb.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	oi := upadmission.NewObjectInterfacesFromScheme(legacyscheme.Scheme)
	u := &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}}
	mut, val := chain.(upadmission.MutationInterface), chain.(upadmission.ValidationInterface)
	return func(p *api.Pod) error {
		a := upadmission.NewAttributesRecord(p, nil, api.Kind("Pod").WithVersion("v1"), "shop", "web", podsGVR, "", upadmission.Create, &metav1.CreateOptions{}, false, u)
		if err := mut.Admit(ctx, a, oi); err != nil {
			return err
		}
		return val.Validate(ctx, a, oi)
	}
}

// TestSameOutcome: both chains admit the pod and change it the same way
// (the token volume's random suffix aside), so the benchmark compares equal
// work; so does admitd's chain over the server's own sources.
func TestSameOutcome(t *testing.T) {
	reg := standard.NewRegistry(standard.Options{})
	names := comparedPlugins(t, reg)
	ours := pod()
	if err := newAdmitdChain(t, reg, names)(ours); err != nil {
		t.Fatalf("admitd: %v", err)
	}
	var in api.Pod
	if err := legacyscheme.Scheme.Convert(pod(), &in, nil); err != nil {
		t.Fatal(err)
	}
	if err := newUpstreamChain(t, names)(&in); err != nil {
		t.Fatalf("upstream: %v", err)
	}
	var theirs corev1.Pod
	if err := legacyscheme.Scheme.Convert(&in, &theirs, nil); err != nil {
		t.Fatal(err)
	}
	theirs.TypeMeta = ours.TypeMeta
	if got, want := maskTokenVolume(t, ours), maskTokenVolume(t, &theirs); got != want {
		t.Fatalf("admitd's pod differs from upstream's\nadmitd:   %s\nupstream: %s", got, want)
	}
	if len(ours.Spec.Volumes) == 0 || ours.Spec.Priority == nil || ours.Annotations["kubernetes.io/limit-ranger"] == "" {
		t.Fatalf("the plugins did not run: %s", maskTokenVolume(t, ours))
	}
	served := pod()
	if err := newServerChain(t, reg, names)(served); err != nil {
		t.Fatalf("admitd over the server's sources: %v", err)
	}
	if got, want := maskTokenVolume(t, served), maskTokenVolume(t, ours); got != want {
		t.Fatalf("admitd's pod over the server's sources differs\nserver:  %s\ncluster: %s", got, want)
	}
}

var tokenVolume = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)

func maskTokenVolume(t *testing.T, p *corev1.Pod) string {
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return tokenVolume.ReplaceAllString(string(data), "kube-api-access-XXXXX")
}
