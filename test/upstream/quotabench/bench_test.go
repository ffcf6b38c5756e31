// Package quotabench measures ResourceQuota admission of a Pod create in a
// namespace with 10 quotas, admitd's plugin beside upstream's in the same
// run. Every quota tracks the pod's resources and has room, so each create
// is checked against all ten and charged to all ten, whose status is then
// written: to an in-memory writer for admitd, to a fake clientset whose
// reactor answers the status update for upstream (each makes one copy).
//
//	cd test/upstream && go test ./quotabench -run - -bench . -benchmem -count 8 | tee /tmp/quota.txt
package quotabench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upadmission "k8s.io/apiserver/pkg/admission"
	upquota "k8s.io/apiserver/pkg/admission/plugin/resourcequota"
	upconfig "k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/quota/v1/evaluator/core"
	"k8s.io/kubernetes/pkg/quota/v1/install"

	"github.com/admitd/admitd/pkg/admission"
	ours "github.com/admitd/admitd/pkg/admission/plugins/resourcequota"
	"github.com/admitd/admitd/pkg/features"
	"github.com/admitd/admitd/pkg/quota"
)

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// quotas are ten quotas of the namespace, each tracking what the pod
// consumes, with room for every iteration.
func quotas() []*corev1.ResourceQuota {
	var out []*corev1.ResourceQuota
	for i := 0; i < 10; i++ {
		hard := corev1.ResourceList{
			"pods": resource.MustParse("1G"), "count/pods": resource.MustParse("1G"),
			"requests.cpu": resource.MustParse("1G"), "requests.memory": resource.MustParse("1E"),
			"limits.cpu": resource.MustParse("1G"), "limits.memory": resource.MustParse("1E"),
		}
		used := corev1.ResourceList{}
		for n := range hard {
			used[n] = resource.MustParse("0")
		}
		out = append(out, &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q%d", i), Namespace: "shop", ResourceVersion: "1"},
			Spec:       corev1.ResourceQuotaSpec{Hard: hard},
			Status:     corev1.ResourceQuotaStatus{Hard: hard, Used: used},
		})
	}
	return out
}

func pod() *corev1.Pod {
	rl := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{
			{Name: "app", Image: "app:1", Resources: corev1.ResourceRequirements{Requests: rl("250m", "128Mi"), Limits: rl("500m", "256Mi")}},
			{Name: "proxy", Image: "proxy:1", Resources: corev1.ResourceRequirements{Requests: rl("100m", "64Mi"), Limits: rl("100m", "64Mi")}},
		}}}
}

// cache is admitd's ObjectCache over fixed quotas.
type cache []runtime.Object

func (c cache) GetCachedObject(context.Context, schema.GroupVersionResource, string, string) (runtime.Object, error) {
	return nil, fmt.Errorf("not used")
}

func (c cache) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	return c, nil
}

// writer stores a status write as the API server would: one copy, the
// resourceVersion one more.
type writer struct {
	mu sync.Mutex
	rv int
}

func (w *writer) UpdateObjectStatus(_ context.Context, _ schema.GroupVersionResource, _ string, obj runtime.Object) (runtime.Object, error) {
	w.mu.Lock()
	w.rv++
	rv := w.rv
	w.mu.Unlock()
	out := obj.DeepCopyObject().(*corev1.ResourceQuota)
	out.ResourceVersion = strconv.Itoa(rv + 1)
	return out, nil
}

type gates struct{}

func (gates) Enabled(name string) bool { return features.Default(name) }

func BenchmarkPodCreate10Quotas(b *testing.B) {
	b.Run("impl=admitd", benchAdmitd)
	b.Run("impl=upstream", benchUpstream)
}

func benchAdmitd(b *testing.B) {
	var c cache
	for _, q := range quotas() {
		c = append(c, q)
	}
	p := ours.New(c, &writer{}, quota.NewRegistry(quota.OptionsFor(gates{})), nil)
	base := pod()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		a := &admission.Attributes{Name: "web", Namespace: "shop", Operation: admission.Create, Resource: podsGVR,
			Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Object: base.DeepCopy(), Record: admission.NewRecord()}
		if err := p.Validate(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}

func benchUpstream(b *testing.B) {
	p, _ := newUpstream(b)
	internal, err := legacyscheme.Scheme.ConvertToVersion(pod(), schema.GroupVersion{Version: runtime.APIVersionInternal})
	if err != nil {
		b.Fatal(err)
	}
	kind := corev1.SchemeGroupVersion.WithKind("Pod")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		a := upadmission.NewAttributesRecord(internal.DeepCopyObject(), nil, kind, "shop", "web", podsGVR, "",
			upadmission.Create, &metav1.CreateOptions{}, false, nil)
		if err := p.Validate(ctx, a, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// newUpstream is upstream's plugin over the ten quotas, with kube-apiserver's
// quota configuration; the count is of the status writes it made.
func newUpstream(tb testing.TB) (*upquota.QuotaAdmission, *int) {
	client := fake.NewClientset()
	rv := 1
	writes := new(int)
	client.PrependReactor("update", "resourcequotas", func(a k8stesting.Action) (bool, runtime.Object, error) {
		*writes++
		rv++
		out := a.(k8stesting.UpdateAction).GetObject().DeepCopyObject().(*corev1.ResourceQuota)
		out.ResourceVersion = strconv.Itoa(rv)
		return true, out, nil
	})
	f := informers.NewSharedInformerFactory(client, 0)
	idx := f.Core().V1().ResourceQuotas().Informer().GetIndexer()
	for _, q := range quotas() {
		if err := idx.Add(q); err != nil {
			tb.Fatal(err)
		}
	}
	p, err := upquota.NewResourceQuota(&upconfig.Configuration{}, 5)
	if err != nil {
		tb.Fatal(err)
	}
	stop := make(chan struct{})
	tb.Cleanup(func() { close(stop) })
	p.SetDrainedNotification(stop)
	p.SetExternalKubeClientSet(client)
	p.SetExternalKubeInformerFactory(f)
	evals, err := core.NewEvaluators(nil, f, nil)
	if err != nil {
		tb.Fatal(err)
	}
	p.SetQuotaConfiguration(generic.NewConfiguration(evals, install.DefaultIgnoredResources()))
	if err := p.ValidateInitialization(); err != nil {
		tb.Fatal(err)
	}
	return p, writes
}

// TestBothCharge checks that both plugins charge the ten quotas, so that
// the benchmark measures the same work.
func TestBothCharge(t *testing.T) {
	w := &writerCounting{}
	var c cache
	for _, q := range quotas() {
		c = append(c, q)
	}
	p := ours.New(c, w, quota.NewRegistry(quota.OptionsFor(gates{})), nil)
	a := &admission.Attributes{Name: "web", Namespace: "shop", Operation: admission.Create, Resource: podsGVR,
		Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Object: pod(), Record: admission.NewRecord()}
	if err := p.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if w.n != 10 {
		t.Fatalf("admitd wrote %d quotas, want 10", w.n)
	}
	up, writes := newUpstream(t)
	internal, err := legacyscheme.Scheme.ConvertToVersion(pod(), schema.GroupVersion{Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatal(err)
	}
	ua := upadmission.NewAttributesRecord(internal, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "shop", "web", podsGVR, "",
		upadmission.Create, &metav1.CreateOptions{}, false, nil)
	if err := up.Validate(context.Background(), ua, nil); err != nil {
		t.Fatal(err)
	}
	if *writes != 10 {
		t.Fatalf("upstream wrote %d quotas, want 10", *writes)
	}
}

type writerCounting struct {
	writer
	n int
}

func (w *writerCounting) UpdateObjectStatus(ctx context.Context, gvr schema.GroupVersionResource, ns string, obj runtime.Object) (runtime.Object, error) {
	w.n++
	return w.writer.UpdateObjectStatus(ctx, gvr, ns, obj)
}
