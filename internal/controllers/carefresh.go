package controllers

import (
	"bytes"
	"context"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// CARefresh is the controller half of CA injection: when a Secret is
// written it rewrites, unchanged, every webhook configuration that takes
// its caBundle from that Secret and holds another one; the write step of
// the update fills the new caBundle, and admission sees an ordinary update
// by CAInjectorUser. It reads configurations from storage and writes
// through client (the loopback client as CAInjectorUser).
//
// The server calls it from its write observers, so a Secret written
// through this instance has refreshed the configurations before its write
// returns. A Secret written on another instance sharing the storage is
// refreshed there.
type CARefresh struct {
	store  storage.Store
	cat    *registry.Catalogue
	client dynamic.Interface
	inject *CAInjection
	log    *slog.Logger
}

// NewCARefresh returns the controller.
func NewCARefresh(store storage.Store, cat *registry.Catalogue, client dynamic.Interface, inject *CAInjection, log *slog.Logger) *CARefresh {
	return &CARefresh{store: store, cat: cat, client: client, inject: inject, log: log}
}

// SecretWritten refreshes the configurations that take their caBundle from
// secret. A stored configuration is decoded only if its bytes mention the
// annotation. A Secret deleted or unusable changes nothing.
func (r *CARefresh) SecretWritten(ctx context.Context, secret metav1.Object) {
	src := caSource{namespace: secret.GetNamespace(), name: secret.GetName()}
	var bundle []byte
	for _, gvr := range []schema.GroupVersionResource{mutatingWebhooksGVR, validatingWebhooksGVR, customResourceDefinitionsGVR} {
		res, ok := r.cat.Lookup(gvr)
		if !ok {
			continue
		}
		page, err := r.store.List(ctx, layout.ResourcePrefix(res), storage.ListOptions{})
		if err != nil {
			r.log.Error("listing webhook configurations for CA injection", "err", err)
			return
		}
		for _, kv := range page.Items {
			obj, ok := r.naming(res, kv, src)
			if !ok {
				continue
			}
			if bundle == nil {
				if bundle, err = r.inject.bundleFrom(ctx, src); err != nil {
					return
				}
			}
			if staleCA(obj, bundle) {
				r.refresh(ctx, gvr, obj)
			}
		}
	}
}

// naming decodes a stored configuration that takes its caBundle from src.
func (r *CARefresh) naming(res *registry.Resource, kv storage.KeyValue, src caSource) (runtime.Object, bool) {
	if !bytes.Contains(kv.Value, []byte(InjectCAAnnotation)) {
		return nil, false
	}
	obj, err := layout.Decode(res, kv)
	if err != nil {
		return nil, false
	}
	got, ok, err := caSourceOf(obj)
	return obj, ok && err == nil && got == src
}

// ConfigurationWritten closes the race between a configuration write that
// read its Secret and a Secret write that listed configurations before that
// write was stored: if what was stored no longer matches the Secret, it is
// refreshed.
func (r *CARefresh) ConfigurationWritten(ctx context.Context, gvr schema.GroupVersionResource, obj runtime.Object) {
	src, ok, err := caSourceOf(obj)
	if !ok || err != nil {
		return
	}
	if bundle, err := r.inject.bundleFrom(ctx, src); err == nil && staleCA(obj, bundle) {
		r.refresh(ctx, gvr, obj)
	}
}

// refresh rewrites one configuration unchanged, retried from the current
// object when another write gets in between; nothing is written when the
// caBundles are already current.
func (r *CARefresh) refresh(ctx context.Context, gvr schema.GroupVersionResource, obj runtime.Object) {
	name := accessorName(obj)
	rc := r.client.Resource(gvr)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := rc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		_, err = rc.Update(ctx, current, metav1.UpdateOptions{FieldManager: caInjectorManager})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		r.log.Warn("injecting a CA bundle", "resource", gvr.Resource, "name", name, "err", err)
	}
}

func accessorName(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetName()
}
