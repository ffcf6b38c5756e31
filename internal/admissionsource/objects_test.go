package admissionsource

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// TestObjectLookup reads a stored pod as a typed object, and reports a
// missing pod and an unserved resource as NotFound.
func TestObjectLookup(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	t.Cleanup(func() { _ = store.Close() })
	l := NewObjectLookup(store, registry.NewCatalogue())
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	if _, err := store.Create(ctx, "/registry/core/pods/ns/p", []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"nodeName":"n1"}}`)); err != nil {
		t.Fatal(err)
	}
	obj, err := l.GetObject(ctx, pods, "ns", "p")
	if pod, ok := obj.(*corev1.Pod); err != nil || !ok || pod.Spec.NodeName != "n1" {
		t.Fatalf("GetObject(pods, ns, p) = %#v, %v; want a pod on n1", obj, err)
	}
	if _, err := l.GetObject(ctx, pods, "ns", "gone"); !apierrors.IsNotFound(err) {
		t.Errorf("GetObject of a missing pod = %v, want NotFound", err)
	}
	unserved := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "things"}
	if _, err := l.GetObject(ctx, unserved, "", "x"); !apierrors.IsNotFound(err) {
		t.Errorf("GetObject of an unserved resource = %v, want NotFound", err)
	}
}
