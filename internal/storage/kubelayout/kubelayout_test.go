package kubelayout_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/kubelayout"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

func newStore(t testing.TB) (*kubelayout.Store, storage.Store) {
	inner := memory.New()
	t.Cleanup(func() { _ = inner.Close() })
	return kubelayout.New(inner, registry.NewCatalogue().Resources()), inner
}

// TestKeys: each object lands under kube-apiserver 1.37's key.
func TestKeys(t *testing.T) {
	cat := registry.NewCatalogue()
	s, inner := newStore(t)
	for _, tc := range []struct {
		gvr       schema.GroupVersionResource
		namespace string
		want      string
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "ns", "/registry/pods/ns/x"},
		{schema.GroupVersionResource{Version: "v1", Resource: "services"}, "ns", "/registry/services/specs/ns/x"},
		{schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}, "ns", "/registry/services/endpoints/ns/x"},
		{schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, "", "/registry/minions/x"},
		{schema.GroupVersionResource{Version: "v1", Resource: "replicationcontrollers"}, "ns", "/registry/controllers/ns/x"},
		{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "/registry/namespaces/x"},
		{schema.GroupVersionResource{Version: "v1", Resource: "events"}, "ns", "/registry/events/ns/x"},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "ns", "/registry/deployments/ns/x"},
		{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, "ns", "/registry/ingress/ns/x"},
		{schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, "ns", "/registry/leases/ns/x"},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, "", "/registry/clusterroles/x"},
		{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}, "", "/registry/validatingwebhookconfigurations/x"},
		{schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, "", "/registry/apiextensions.k8s.io/customresourcedefinitions/x"},
	} {
		res, ok := cat.Lookup(tc.gvr)
		if !ok {
			t.Fatalf("no resource %s", tc.gvr)
		}
		key := layout.Key(res, tc.namespace, "x")
		if _, err := s.Create(t.Context(), key, nil); err != nil {
			t.Fatalf("Create(%s): %v", key, err)
		}
		if _, err := inner.Get(t.Context(), tc.want); err != nil {
			t.Errorf("%s stored at %s: not found under %s", tc.gvr.GroupResource(), key, tc.want)
		}
		if got, err := s.Get(t.Context(), key); err != nil || got.Key != key {
			t.Errorf("Get(%s) = %q, %v", key, got.Key, err)
		}
	}
	// custom resources keep admitd's (and upstream's) key
	cr := "/registry/stable.example.com/crontabs/ns/x"
	if _, err := s.Create(t.Context(), cr, []byte(`{"apiVersion":"stable.example.com/v1","kind":"CronTab"}`)); err != nil {
		t.Fatal(err)
	}
	if got, err := inner.Get(t.Context(), cr); err != nil || got.Value[0] != '{' {
		t.Errorf("custom resource stored as %q, %v; want JSON at its own key", got.Value, err)
	}
}

// TestProtobufValues: built-in kinds are stored in kube-apiserver's
// protobuf envelope of their storage version, and read back as admitd's
// JSON.
func TestProtobufValues(t *testing.T) {
	s, inner := newStore(t)
	cat := registry.NewCatalogue()
	res, _ := cat.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ResourceVersion: "9"}, Data: map[string]string{"k": "v"}}
	value, err := layout.Encode(cm)
	if err != nil {
		t.Fatal(err)
	}
	key := layout.Key(res, "ns", "c")
	kv, err := s.Create(t.Context(), key, value)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := inner.Get(t.Context(), "/registry/configmaps/ns/c")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw.Value, []byte("k8s\x00")) {
		t.Fatalf("stored value %q, want the k8s protobuf envelope", raw.Value)
	}
	obj, gvk, err := protobuf.NewSerializer(registry.Scheme(), registry.Scheme()).Decode(raw.Value, nil, nil)
	if err != nil {
		t.Fatalf("decoding the stored value as kube-apiserver would: %v", err)
	}
	got, ok := obj.(*corev1.ConfigMap)
	if !ok || gvk.Kind != "ConfigMap" || gvk.Version != "v1" || got.Data["k"] != "v" || got.Name != "c" || got.ResourceVersion != "" {
		t.Errorf("stored %s %#v; want a v1 ConfigMap c with data k=v and no resourceVersion", gvk, obj)
	}
	back, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := layout.Decode(res, back)
	if err != nil {
		t.Fatalf("layout.Decode of the value read back: %v", err)
	}
	if d := decoded.(*corev1.ConfigMap); d.Data["k"] != "v" || d.ResourceVersion != fmt.Sprint(kv.ModRevision) {
		t.Errorf("read back %#v", d)
	}
}

// TestWidePrefixes: a list or watch of a group or of everything sees the
// objects under it, in admitd's key order, paged.
func TestWidePrefixes(t *testing.T) {
	s, inner := newStore(t)
	keys := []string{"/registry/core/pods/a/p", "/registry/apps/deployments/a/d", "/registry/core/configmaps/a/c",
		"/registry/core/services/a/s", "/registry/stable.example.com/crontabs/a/x"}
	for _, k := range keys {
		if _, err := s.Create(t.Context(), k, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"/registry/ranges/serviceips", "/registry/apiregistration.k8s.io/apiservices/v1.apps"} {
		if _, err := inner.Create(t.Context(), k, []byte("k8s\x00upstream's own")); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.List(t.Context(), "/registry/core/", storage.ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range res.Items {
		got = append(got, kv.Key)
	}
	want := []string{"/registry/core/configmaps/a/c", "/registry/core/pods/a/p"}
	if !slices.Equal(got, want) || !res.More || res.RemainingCount != 1 {
		t.Errorf("List(/registry/core/, limit 2) = %q, more %v, remaining %d; want %q, true, 1", got, res.More, res.RemainingCount, want)
	}
	all, err := s.List(t.Context(), "/registry/", storage.ListOptions{})
	if err != nil || len(all.Items) != len(keys) {
		t.Errorf("List(/registry/) = %d items, %v; want %d (upstream's own keys left out)", len(all.Items), err, len(keys))
	}
	w, err := s.Watch(t.Context(), "/registry/core/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := s.Create(t.Context(), "/registry/apps/deployments/a/e", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(t.Context(), "/registry/core/services/a/t", nil); err != nil {
		t.Fatal(err)
	}
	if ev := <-w.Events(); ev.KV.Key != "/registry/core/services/a/t" {
		t.Errorf("Watch(/registry/core/) first event %s, want the service", ev.KV.Key)
	}
}

// TestAPIServicesStoredAsJSON: kube-apiserver's aggregator stores
// APIServices in JSON (its scheme's LegacyCodec), so admitd writes them in
// JSON under /registry/apiregistration.k8s.io/apiservices/ and reads
// upstream's back.
func TestAPIServicesStoredAsJSON(t *testing.T) {
	s, inner := newStore(t)
	cat := registry.NewCatalogue()
	res, ok := cat.Lookup(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	if !ok {
		t.Fatal("apiservices not served")
	}
	value := []byte(`{"kind":"APIService","apiVersion":"apiregistration.k8s.io/v1","metadata":{"name":"v1.apps"},"spec":{"group":"apps","version":"v1","groupPriorityMinimum":17800,"versionPriority":15}}`)
	key := layout.Key(res, "", "v1.apps")
	if _, err := s.Create(t.Context(), key, value); err != nil {
		t.Fatal(err)
	}
	raw, err := inner.Get(t.Context(), "/registry/apiregistration.k8s.io/apiservices/v1.apps")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw.Value, value) {
		t.Errorf("stored %q, want the JSON as written", raw.Value)
	}
	upstream := []byte(`{"kind":"APIService","apiVersion":"apiregistration.k8s.io/v1","metadata":{"name":"v1.batch"},"spec":{"group":"batch","version":"v1","groupPriorityMinimum":17400,"versionPriority":15}}`)
	if _, err := inner.Create(t.Context(), "/registry/apiregistration.k8s.io/apiservices/v1.batch", upstream); err != nil {
		t.Fatal(err)
	}
	back, err := s.Get(t.Context(), layout.Key(res, "", "v1.batch"))
	if err != nil || !bytes.Equal(back.Value, upstream) {
		t.Errorf("read back %q, %v; want upstream's JSON", back.Value, err)
	}
}
