package admission_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

// TestCacheOfAnyObjectCache: over an ObjectCache that hands out no
// ResourceCaches of its own, CacheOf reads the resource it was given, and
// only that one.
func TestCacheOfAnyObjectCache(t *testing.T) {
	ctx := t.Context()
	cluster := admissiontest.NewCluster(
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "default"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "default"}})
	accounts := admission.CacheOf(cluster, corev1.SchemeGroupVersion.WithResource("serviceaccounts"))
	obj, err := accounts.Get(ctx, "a", "default")
	if _, ok := obj.(*corev1.ServiceAccount); err != nil || !ok {
		t.Errorf("Get = %T, %v; want the service account", obj, err)
	}
	if _, err := accounts.Get(ctx, "a", "other"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a missing account = %v, want NotFound", err)
	}
	objs, err := accounts.List(ctx, "a", nil)
	if err != nil || len(objs) != 1 {
		t.Fatalf("List = %v, %v; want one object", objs, err)
	}
	if _, ok := objs[0].(*corev1.ServiceAccount); !ok {
		t.Errorf("List returned a %T", objs[0])
	}
}
