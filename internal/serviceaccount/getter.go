package serviceaccount

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectGetter reads one object of a resource; a missing one is the API's
// NotFound StatusError.
type ObjectGetter func(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error)

// NewGetter returns the Getter that reads the objects a token names with
// get.
func NewGetter(get ObjectGetter) Getter { return typedGetter(get) }

type typedGetter ObjectGetter

func getAs[T runtime.Object](ctx context.Context, g typedGetter, resource, namespace, name string) (T, error) {
	obj, err := g(ctx, corev1.SchemeGroupVersion.WithResource(resource), namespace, name)
	if err != nil {
		var zero T
		return zero, err
	}
	return obj.(T), nil
}

func (g typedGetter) ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	return getAs[*corev1.ServiceAccount](ctx, g, "serviceaccounts", namespace, name)
}

func (g typedGetter) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return getAs[*corev1.Secret](ctx, g, "secrets", namespace, name)
}

func (g typedGetter) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return getAs[*corev1.Pod](ctx, g, "pods", namespace, name)
}

func (g typedGetter) Node(ctx context.Context, name string) (*corev1.Node, error) {
	return getAs[*corev1.Node](ctx, g, "nodes", "", name)
}
