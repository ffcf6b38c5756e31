package server

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/serviceaccount"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// storedObjects reads the objects a service-account token names straight
// from storage (upstream reads them from informer caches, falling back to
// etcd): a missing one is the API's NotFound.
type storedObjects struct {
	store storage.Store
	cat   *registry.Catalogue
}

var _ serviceaccount.Getter = storedObjects{}

func (o storedObjects) get(ctx context.Context, resource, namespace, name string) (runtime.Object, error) {
	res, ok := o.cat.Lookup(corev1.SchemeGroupVersion.WithResource(resource))
	if !ok {
		return nil, fmt.Errorf("no resource %s", resource)
	}
	kv, err := o.store.Get(ctx, layout.Key(res, namespace, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apierrors.NewNotFound(res.GroupResource(), name)
	}
	if err != nil {
		return nil, err
	}
	return layout.Decode(res, kv)
}

func (o storedObjects) ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	obj, err := o.get(ctx, "serviceaccounts", namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ServiceAccount), nil
}

func (o storedObjects) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	obj, err := o.get(ctx, "secrets", namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Secret), nil
}

func (o storedObjects) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	obj, err := o.get(ctx, "pods", namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

func (o storedObjects) Node(ctx context.Context, name string) (*corev1.Node, error) {
	obj, err := o.get(ctx, "nodes", "", name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Node), nil
}
