package apiserver

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// labelReconcile restores the label "owner: bootstrap" on a ConfigMap,
// the way the bootstrap policy's reconcile restores what it owns.
func labelReconcile(existing, _ runtime.Object) runtime.Object {
	cm := existing.(*corev1.ConfigMap)
	if cm.Labels["owner"] == "bootstrap" {
		return nil
	}
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["owner"] = "bootstrap"
	return cm
}

func bootstrapConfigMaps() []runtime.Object {
	var objs []runtime.Object
	for _, name := range []string{"a", "b", "c"} {
		objs = append(objs, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: map[string]string{"owner": "bootstrap"}}})
	}
	return objs
}

// EnsureObjectsRecorded builds and reconciles the objects only when the
// fingerprint or one of the objects changed since its last run.
func TestEnsureObjectsRecorded(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	s := New(testConfig(store, registry.NewCatalogue()))
	built := 0
	ensure := func(fingerprint string) {
		t.Helper()
		err := s.EnsureObjectsRecorded(ctx, EnsureRecord{Key: "test", Fingerprint: fingerprint}, KubeAPIServerManager, labelReconcile,
			func() ([]runtime.Object, error) { built++; return bootstrapConfigMaps(), nil })
		if err != nil {
			t.Fatal(err)
		}
	}
	res, _ := s.cat.Lookup(corev1.SchemeGroupVersion.WithResource("configmaps"))
	key := layout.Key(res, "kube-system", "b")

	ensure("v1")
	if built != 1 {
		t.Fatalf("first run built the objects %d times, want 1", built)
	}
	if _, err := store.Get(ctx, key); err != nil {
		t.Fatalf("first run did not create b: %v", err)
	}
	ensure("v1")
	if built != 1 {
		t.Errorf("a run with nothing changed built the objects (%d runs), want it skipped", built)
	}

	// Someone removes the label: the next run sees b's new revision and
	// reconciles it.
	kv, _ := store.Get(ctx, key)
	obj, err := layout.Decode(res, kv)
	if err != nil {
		t.Fatal(err)
	}
	obj.(*corev1.ConfigMap).Labels = nil
	data, _ := layout.Encode(obj)
	if _, err := store.Update(ctx, key, data, kv.ModRevision); err != nil {
		t.Fatal(err)
	}
	ensure("v1")
	if built != 2 {
		t.Fatalf("a run after b changed built the objects %d times, want 2", built)
	}
	kv, _ = store.Get(ctx, key)
	if obj, _ := layout.Decode(res, kv); obj.(*corev1.ConfigMap).Labels["owner"] != "bootstrap" {
		t.Errorf("b not reconciled: labels %v", obj.(*corev1.ConfigMap).Labels)
	}
	ensure("v1")
	if built != 2 {
		t.Errorf("the run after the reconcile built the objects again (%d runs)", built)
	}

	// A deleted object, or a new fingerprint, runs it again.
	if _, _, err := store.Delete(ctx, key, 0); err != nil {
		t.Fatal(err)
	}
	ensure("v1")
	if _, err := store.Get(ctx, key); err != nil || built != 3 {
		t.Errorf("after b's deletion: %d runs, b: %v; want 3 runs and b back", built, err)
	}
	ensure("v2")
	if built != 4 {
		t.Errorf("a new fingerprint: %d runs, want 4", built)
	}
}
