package admissionsource

import (
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
