package admissionsource

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

func TestCommonPrefix(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		{nil, "/registry/"},
		{[]string{"/registry/admissionregistration.k8s.io/validatingwebhookconfigurations/"}, "/registry/admissionregistration.k8s.io/validatingwebhookconfigurations/"},
		{[]string{"/registry/admissionregistration.k8s.io/validatingwebhookconfigurations/", "/registry/admissionregistration.k8s.io/mutatingwebhookconfigurations/"}, "/registry/admissionregistration.k8s.io/"},
		{[]string{"/registry/core/configmaps/", "/registry/core/config/"}, "/registry/core/"},
		{[]string{"/registry/apps/deployments/", "/registry/core/pods/"}, "/registry/"},
	}
	for _, tc := range cases {
		if got := commonPrefix(tc.in); got != tc.want {
			t.Errorf("commonPrefix(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestConfigCacheFollowsStorage: a configuration written to storage by
// another server instance is picked up through the watch, and writes of
// other resources do not cause reloads.
func TestConfigCacheFollowsStorage(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	cat := registry.NewCatalogue()
	var builds atomic.Int64
	vwc := admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
	c := NewConfigCache(store, cat, []schema.GroupVersionResource{vwc}, func(objs []runtime.Object) *int {
		builds.Add(1)
		n := len(objs)
		return &n
	})
	if err := c.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	go c.Run(ctx)
	time.Sleep(50 * time.Millisecond) // let the watch start
	before := builds.Load()
	if _, err := store.Create(ctx, "/registry/core/configmaps/default/unrelated", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"unrelated","namespace":"default"}}`)); err != nil {
		t.Fatal(err)
	}
	cfg := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"from-elsewhere","uid":"u1"}}`
	if _, err := store.Create(ctx, "/registry/admissionregistration.k8s.io/validatingwebhookconfigurations/from-elsewhere", []byte(cfg)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for *c.Current() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the cache never saw the configuration written to storage (snapshot %d)", *c.Current())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := builds.Load() - before; n != 1 {
		t.Errorf("reloads after one unrelated and one cached write = %d, want 1", n)
	}
}

// TestConfigCacheDecodesOnlyWhatChanged: a reload hands the snapshot the
// very objects of the last reload for the keys that did not change, a new
// decoding (with its new resourceVersion) for those that did, and nothing
// for those deleted.
func TestConfigCacheDecodesOnlyWhatChanged(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	vwc := admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
	c := NewConfigCache(store, registry.NewCatalogue(), []schema.GroupVersionResource{vwc}, func(objs []runtime.Object) *map[string]runtime.Object {
		byName := map[string]runtime.Object{}
		for _, o := range objs {
			byName[o.(*admissionregistrationv1.ValidatingWebhookConfiguration).Name] = o
		}
		return &byName
	})
	const prefix = "/registry/admissionregistration.k8s.io/validatingwebhookconfigurations/"
	body := func(name, label string) []byte {
		return []byte(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"` + name + `","labels":{"v":"` + label + `"}}}`)
	}
	for _, n := range []string{"a", "b", "c"} {
		if _, err := store.Create(ctx, prefix+n, body(n, "1")); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	first := *c.Current()
	kv, err := store.Update(ctx, prefix+"b", body("b", "2"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Delete(ctx, prefix+"c", 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	second := *c.Current()
	if len(second) != 2 || second["a"] != first["a"] {
		t.Fatalf("after the reload: %d objects, a reused %v; want a and b, a the same object", len(second), second["a"] == first["a"])
	}
	b := second["b"].(*admissionregistrationv1.ValidatingWebhookConfiguration)
	if b == first["b"] || b.Labels["v"] != "2" || b.ResourceVersion != strconv.FormatInt(kv.ModRevision, 10) {
		t.Fatalf("b after its update: same object %v, label %q, resourceVersion %q; want a new decoding at %d",
			b == first["b"], b.Labels["v"], b.ResourceVersion, kv.ModRevision)
	}
}
