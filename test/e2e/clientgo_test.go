package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

func TestClientGoCRUD(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cg"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("cg").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Name) != len("gen-")+5 || cm.UID == "" || cm.ResourceVersion == "" {
		t.Fatalf("created configmap = name %q uid %q rv %q, want a generated name, a uid and a resourceVersion", cm.Name, cm.UID, cm.ResourceVersion)
	}
	stale := cm.DeepCopy()
	cm.Data["a"] = "2"
	if cm, err = cs.CoreV1().ConfigMaps("cg").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale.Data["a"] = "3"
	if _, err := cs.CoreV1().ConfigMaps("cg").Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("update with a stale resourceVersion = %v, want Conflict", err)
	}
	for i := 0; i < 5; i++ {
		_, err := cs.CoreV1().ConfigMaps("cg").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("page-%d", i), Labels: map[string]string{"page": "yes"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	opts := metav1.ListOptions{LabelSelector: "page=yes", Limit: 2}
	for {
		l, err := cs.CoreV1().ConfigMaps("cg").List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range l.Items {
			names = append(names, it.Name)
		}
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	if fmt.Sprint(names) != "[page-0 page-1 page-2 page-3 page-4]" {
		t.Fatalf("paged list = %v, want page-0..page-4", names)
	}
	if err := cs.CoreV1().ConfigMaps("cg").Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("cg").Get(ctx, cm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete = %v, want NotFound", err)
	}
}

// TestInformerSurvivesRestart keeps an informer running across a server
// restart and checks that it sees changes made before and after.
func TestInformerSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := startAdmitd(t, dir)
	port := a.URL[len("https://127.0.0.1:"):]
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"))
	inf := factory.Core().V1().ConfigMaps().Informer()
	var mu sync.Mutex
	seen := map[string]string{}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { mu.Lock(); seen[o.(*corev1.ConfigMap).Name] = "added"; mu.Unlock() },
		UpdateFunc: func(_, o any) { mu.Lock(); seen[o.(*corev1.ConfigMap).Name] = "updated"; mu.Unlock() },
		DeleteFunc: func(o any) {
			if cm, ok := o.(*corev1.ConfigMap); ok {
				mu.Lock()
				seen[cm.Name] = "deleted"
				mu.Unlock()
			}
		},
	})
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	create := func(name string) {
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := func(name, state string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			got := seen[name]
			mu.Unlock()
			if got == state {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("informer state of %s never became %q", name, state)
	}
	create("before")
	want("before", "added")
	a.Stop()
	b := startAdmitd(t, dir, "--secure-port", port)
	_ = b
	create("after")
	want("after", "added")
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want("before", "deleted")
}

func TestUnconditionalUpdate(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	cs := kubernetes.NewForConfigOrDie(a.RestConfig(t))
	ctx := context.Background()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"a": "1"}}
	if _, err := cs.CoreV1().Secrets("default").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"a": []byte("2")}}
	got, err := cs.CoreV1().Secrets("default").Update(ctx, sec, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update without resourceVersion = %v, want it applied to the stored object", err)
	}
	if string(got.Data["a"]) != "2" || got.ResourceVersion == "" {
		t.Fatalf("updated secret = %q rv %q, want data 2 and a resourceVersion", got.Data["a"], got.ResourceVersion)
	}
}
