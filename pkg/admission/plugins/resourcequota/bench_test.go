package resourcequota_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/plugins/resourcequota"
	"github.com/admitd/admitd/pkg/quota"
)

type fixedCache []runtime.Object

func (c fixedCache) GetCachedObject(context.Context, schema.GroupVersionResource, string, string) (runtime.Object, error) {
	return nil, fmt.Errorf("not used")
}

func (c fixedCache) ListCachedObjects(context.Context, schema.GroupVersionResource, string, labels.Selector) ([]runtime.Object, error) {
	return c, nil
}

type copyWriter struct {
	mu sync.Mutex
	rv int
}

func (w *copyWriter) UpdateObjectStatus(_ context.Context, _ schema.GroupVersionResource, _ string, obj runtime.Object) (runtime.Object, error) {
	w.mu.Lock()
	w.rv++
	rv := w.rv
	w.mu.Unlock()
	out := obj.DeepCopyObject().(*corev1.ResourceQuota)
	out.ResourceVersion = strconv.Itoa(rv + 1)
	return out, nil
}

// BenchmarkPodCreate10Quotas is admission of a pod create charged to ten
// quotas (test/upstream/quotabench compares it with upstream's).
func BenchmarkPodCreate10Quotas(b *testing.B) {
	var c fixedCache
	for i := 0; i < 10; i++ {
		hard := rl("pods", "1G", "count/pods", "1G", "requests.cpu", "1G", "requests.memory", "1E", "limits.cpu", "1G", "limits.memory", "1E")
		used := rl("pods", "0", "count/pods", "0", "requests.cpu", "0", "requests.memory", "0", "limits.cpu", "0", "limits.memory", "0")
		q := rq(fmt.Sprint("q", i), hard, used)
		q.Namespace = "shop"
		c = append(c, q)
	}
	p := resourcequota.New(c, &copyWriter{}, quota.NewRegistry(quota.Options{PodLevelResources: true, InPlacePodVerticalScaling: true}), nil)
	base := pod("web", rl("cpu", "250m", "memory", "128Mi"))
	base.Namespace = "shop"
	base.Spec.Containers[0].Resources.Limits = rl("cpu", "500m", "memory", "256Mi")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		a := &admission.Attributes{Name: "web", Namespace: "shop", Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
			Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Object: base.DeepCopy(), Record: admission.NewRecord()}
		if err := p.Validate(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConfigMapCreateWithoutQuotas is admission of a create in a
// namespace without quotas, the common case.
func BenchmarkConfigMapCreateWithoutQuotas(b *testing.B) {
	p := resourcequota.New(fixedCache(nil), &copyWriter{}, quota.NewRegistry(quota.Options{}), nil)
	ctx := context.Background()
	a := &admission.Attributes{Name: "c", Namespace: "shop", Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"),
		Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Object: configMap("c"), Record: admission.NewRecord()}
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Validate(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}

// A create in a namespace without quotas (none limited) is admitted
// without waiting for a batch: nothing is allocated for it.
func TestNoQuotaNoBatch(t *testing.T) {
	p := resourcequota.New(fixedCache(nil), &copyWriter{}, quota.NewRegistry(quota.Options{}), nil)
	ctx := context.Background()
	a := &admission.Attributes{Name: "c", Namespace: "shop", Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("configmaps"),
		Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Object: configMap("c"), Record: admission.NewRecord()}
	allocs := testing.AllocsPerRun(100, func() {
		if err := p.Validate(ctx, a); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per create, want 0 (a batch was waited for)", allocs)
	}
}
