package apiserver

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// systemNamespaces exist in every cluster from the start.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// Bootstrap creates what a fresh cluster has: the system namespaces and
// their "default" service accounts (which the service-account controller
// creates for every later namespace; writing these here keeps a fresh
// server idle until its first request). Existing objects are left alone.
func (s *Server) Bootstrap(ctx context.Context) error {
	nsRes, _ := s.cat.Lookup(corev1.SchemeGroupVersion.WithResource("namespaces"))
	saRes, _ := s.cat.Lookup(corev1.SchemeGroupVersion.WithResource("serviceaccounts"))
	for _, name := range systemNamespaces {
		ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := s.bootstrapObject(ctx, nsRes, ns); err != nil && !errors.Is(err, storage.ErrKeyExists) {
			return err
		}
		sa := &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
		if err := s.bootstrapObject(ctx, saRes, sa); err != nil && !errors.Is(err, storage.ErrKeyExists) {
			return err
		}
	}
	if err := s.seedNodePorts(ctx); err != nil {
		return err
	}
	return s.SyncCustomResources(ctx)
}

// bootstrapObject stores obj, defaulted and prepared, unless it exists
// (storage.ErrKeyExists, which Bootstrap ignores).
func (s *Server) bootstrapObject(ctx context.Context, res *registry.Resource, obj runtime.Object) error {
	if res.Strategy.Default != nil {
		res.Strategy.Default(obj)
	}
	m := accessor(obj)
	s.fillSystemFields(res, m)
	registry.PrepareForCreate(res, obj)
	data, err := layout.Encode(obj)
	if err != nil {
		return err
	}
	_, err = s.store.Create(ctx, layout.Key(res, m.GetNamespace(), m.GetName()), data)
	return err
}

// Reconcile returns what to store in place of existing, an object that
// EnsureObjects found already stored where it would have created expected,
// or nil to leave it. It may modify and return existing.
type Reconcile func(existing, expected runtime.Object) runtime.Object

// EnsureObjects stores each of objs, defaulted and prepared, unless an
// object of its kind and name exists; then, with a reconcile function,
// whatever it returns replaces the stored object (compare-and-swap,
// retried on conflict). Each of objs must carry its apiVersion and kind.
// Like Bootstrap, it writes to storage directly: no admission, no
// observers (reload the caches that read these objects afterwards).
func (s *Server) EnsureObjects(ctx context.Context, reconcile Reconcile, objs ...runtime.Object) error {
	for _, obj := range objs {
		gvk := obj.GetObjectKind().GroupVersionKind()
		res, ok := s.cat.LookupKind(gvk)
		if !ok {
			return fmt.Errorf("no resource serves %v", gvk)
		}
		if err := s.bootstrapObject(ctx, res, obj); !errors.Is(err, storage.ErrKeyExists) {
			if err != nil {
				return err
			}
			continue
		}
		if reconcile == nil {
			continue
		}
		if err := s.reconcileObject(ctx, res, obj, reconcile); err != nil {
			return err
		}
	}
	return nil
}

// reconcileObject replaces the stored object of expected's name by what
// reconcile makes of it, if anything.
func (s *Server) reconcileObject(ctx context.Context, res *registry.Resource, expected runtime.Object, reconcile Reconcile) error {
	m := accessor(expected)
	key := layout.Key(res, m.GetNamespace(), m.GetName())
	for attempt := 0; ; attempt++ {
		kv, err := s.store.Get(ctx, key)
		if err != nil {
			return err
		}
		existing, err := layout.Decode(res, kv)
		if err != nil {
			return err
		}
		next := reconcile(existing, expected)
		if next == nil {
			return nil
		}
		data, err := layout.Encode(next)
		if err != nil {
			return err
		}
		_, err = s.store.Update(ctx, key, data, kv.ModRevision)
		if !errors.Is(err, storage.ErrConflict) || attempt >= 3 {
			return err
		}
	}
}
