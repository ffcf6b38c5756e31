package server

import (
	"context"
	"log/slog"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// configCache is what a write observer needs of an admission config cache.
type configCache interface {
	Handles(gvr schema.GroupVersionResource) bool
	Reload(ctx context.Context) error
}

// writeObservers are what a write changes beyond storage, before it
// returns, in this order: the custom resources served, the admission
// sources (read by what follows: CA injection reads Secrets), the RBAC
// policy, the admission configuration caches, and the configurations CA
// injection keeps up to date. The CA refresh writes through caTransport (the
// loopback).
func writeObservers(store storage.Store, cat *registry.Catalogue, crds *apiserver.CustomResources, adm *admissionParts, policy *rbacPolicy, caTransport http.RoundTripper, inject *controllers.CAInjection, log *slog.Logger) ([]apiserver.WriteObserver, error) {
	client, err := controllers.NewClient(caTransport)
	if err != nil {
		return nil, err
	}
	refresh := controllers.NewCARefresh(store, cat, client, inject, log.With("controller", "ca-injection"))
	return []apiserver.WriteObserver{
		crds.Observer(),
		apiserver.Observer{
			HandlesFunc: adm.sources.Handles,
			WrittenFunc: func(ctx context.Context, ev apiserver.WriteEvent) {
				adm.sources.Observe(ctx, ev.Resource, ev.Deleted, ev.Object)
			},
		},
		reloading(policy.cache, "reloading RBAC policy", log),
		reloading(adm.webhooks, "reloading webhook configurations", log),
		reloading(adm.policies, "reloading admission policies", log),
		apiserver.ObserveResources(func(ctx context.Context, ev apiserver.WriteEvent) {
			if m, err := meta.Accessor(ev.Object); err == nil {
				refresh.SecretWritten(ctx, m)
			}
		}, corev1.Resource("secrets")),
		apiserver.Observer{
			HandlesFunc: func(gvr schema.GroupVersionResource) bool {
				return controllers.IsWebhookConfiguration(gvr.GroupResource())
			},
			WrittenFunc: func(ctx context.Context, ev apiserver.WriteEvent) {
				if !ev.Deleted {
					refresh.ConfigurationWritten(ctx, ev.Resource, ev.Object)
				}
			},
		},
	}, nil
}

// reloading is the observer that reloads c on writes of its resources.
func reloading(c configCache, what string, log *slog.Logger) apiserver.WriteObserver {
	return apiserver.Observer{
		HandlesFunc: c.Handles,
		WrittenFunc: func(ctx context.Context, _ apiserver.WriteEvent) {
			if err := c.Reload(ctx); err != nil {
				log.Error(what, "err", err)
			}
		},
	}
}

// loopback is the API server's loopback transport as user, usable before
// the server exists: the observers that write through it are built first
// and only called once it serves.
func (p *apiParts) loopback(user authenticationv1.UserInfo) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		return p.api.Loopback(user).RoundTrip(r)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
