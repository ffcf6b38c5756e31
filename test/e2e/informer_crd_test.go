package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// TestInformersOverPodsAndCustomResourcesSurviveRestart runs dynamic
// informers over pods and a custom resource across a server restart.
func TestInformersOverPodsAndCustomResourcesSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := startAdmitd(t, dir)
	port := a.URL[len("https://127.0.0.1:"):]
	a.MustKubectl(t, cronTabCRD, "apply", "-f", "-")
	dyn := dynamic.NewForConfigOrDie(a.RestConfig(t))
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	crontabs := schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, "default", nil)
	var mu sync.Mutex
	seen := map[string]bool{}
	for _, gvr := range []schema.GroupVersionResource{pods, crontabs} {
		_, _ = factory.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(o any) { mu.Lock(); seen[o.(*unstructured.Unstructured).GetName()] = true; mu.Unlock() },
		})
	}
	factory.Start(ctx.Done())
	for gvr, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer over %v did not sync", gvr)
		}
	}
	create := func(gvr schema.GroupVersionResource, obj map[string]any) {
		t.Helper()
		if _, err := dyn.Resource(gvr).Namespace("default").Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}
	}
	cron := func(name string) map[string]any {
		return map[string]any{"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"cronSpec": "* * * * *"}}
	}
	waitSeen := func(names ...string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			all := true
			for _, n := range names {
				all = all && seen[n]
			}
			mu.Unlock()
			if all {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("informers never saw %v", names)
	}
	create(pods, pod("pod-before"))
	create(crontabs, cron("cron-before"))
	waitSeen("pod-before", "cron-before")
	a.Stop()
	startAdmitd(t, dir, "--secure-port", port)
	create(pods, pod("pod-after"))
	create(crontabs, cron("cron-after"))
	waitSeen("pod-after", "cron-after")
}
