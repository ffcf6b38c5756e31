package apiserver

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// namespaceFinalizer empties a Terminating namespace and then removes it:
// the job of upstream's namespace controller. It works on storage directly,
// without admission.
type namespaceFinalizer struct {
	s     *Server
	queue chan string
}

func newNamespaceFinalizer(s *Server) *namespaceFinalizer {
	return &namespaceFinalizer{s: s, queue: make(chan string, 1024)}
}

func (f *namespaceFinalizer) enqueue(name string) {
	select {
	case f.queue <- name:
	default:
		go func() { f.queue <- name }()
	}
}

// run processes namespaces until ctx ends.
func (f *namespaceFinalizer) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case name := <-f.queue:
			if err := f.finalize(ctx, name); err != nil {
				f.s.log.Warn("finalizing namespace", "namespace", name, "err", err)
				time.AfterFunc(time.Second, func() { f.enqueue(name) })
			}
		}
	}
}

var errNamespaceNotEmpty = errors.New("namespace not empty yet")

func (f *namespaceFinalizer) finalize(ctx context.Context, name string) error {
	remaining := 0
	for _, res := range f.s.cat.Resources() {
		if !res.Namespaced || res.Version != res.StorageVersion {
			continue
		}
		n, err := f.emptyResource(ctx, res, name)
		if err != nil {
			return err
		}
		remaining += n
	}
	if remaining > 0 {
		return errNamespaceNotEmpty
	}
	return f.removeNamespace(ctx, name)
}

// emptyResource deletes the objects of res in namespace; objects with
// finalizers are marked and counted as remaining.
func (f *namespaceFinalizer) emptyResource(ctx context.Context, res *registry.Resource, namespace string) (int, error) {
	page, err := f.s.store.List(ctx, layout.ListPrefix(res, namespace), storage.ListOptions{})
	if err != nil {
		return 0, err
	}
	remaining := 0
	for _, kv := range page.Items {
		obj, err := layout.Decode(res, kv)
		if err != nil {
			return 0, err
		}
		if !hasFinalizers(res, obj) {
			if _, _, err := f.s.store.Delete(ctx, kv.Key, kv.ModRevision); err != nil && !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrConflict) {
				return 0, err
			}
			continue
		}
		remaining++
		if accessor(obj).GetDeletionTimestamp() == nil {
			markDeleting(res, obj, f.s.cfg.Now())
			if data, err := layout.Encode(obj); err == nil {
				_, _ = f.s.store.Update(ctx, kv.Key, data, kv.ModRevision)
			}
		}
	}
	return remaining, nil
}

// removeNamespace drops the "kubernetes" finalizer and deletes the namespace
// when nothing else holds it.
func (f *namespaceFinalizer) removeNamespace(ctx context.Context, name string) error {
	res, _ := f.s.cat.Lookup(corev1.SchemeGroupVersion.WithResource("namespaces"))
	key := layout.Key(res, "", name)
	kv, err := f.s.store.Get(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	obj, err := layout.Decode(res, kv)
	if err != nil {
		return err
	}
	ns := obj.(*corev1.Namespace)
	ns.Spec.Finalizers = nil
	if len(ns.Finalizers) == 0 {
		_, _, err = f.s.store.Delete(ctx, key, kv.ModRevision)
		return err
	}
	data, err := layout.Encode(ns)
	if err != nil {
		return err
	}
	_, err = f.s.store.Update(ctx, key, data, kv.ModRevision)
	return err
}
