package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// The health endpoints answer as kube-apiserver 1.37.2's (recorded from it):
// "ok", the checks in upstream's order with ?verbose, ?exclude, one check
// by path (a plain 404 for a check the endpoint does not have), and a 500
// listing the checks (reasons withheld) when one fails; the storage checks
// are named etcd and etcd-readiness whatever the backend, and readyz's
// shutdown check fails once shutdown has begun.
func TestHealthEndpoints(t *testing.T) {
	ready := true
	var storageErr error
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.Ready = func() bool { return ready }
	cfg.StorageHealth = func(context.Context) error { return storageErr }
	cfg.StorageReadiness = func(context.Context) error { return storageErr }
	hookDone := false
	cfg.StartChecks = []HealthCheck{{Name: "poststarthook/rbac/bootstrap-roles", Check: func(context.Context) error {
		if !hookDone {
			return errors.New("not finished")
		}
		return nil
	}}}
	s := New(cfg)
	get := func(path string) (int, string) {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w.Code, w.Body.String()
	}
	check := func(path string, code int, body string) {
		t.Helper()
		if gotCode, got := get(path); gotCode != code || got != body {
			t.Errorf("GET %s = %d %q, want %d %q", path, gotCode, got, code, body)
		}
	}
	check("/readyz/poststarthook/rbac/bootstrap-roles", 500, "internal server error: not finished\n")
	check("/livez", 500, "[+]ping ok\n[+]log ok\n[+]etcd ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\nlivez check failed\n")
	hookDone = true
	const hook = "[+]poststarthook/rbac/bootstrap-roles ok\n"
	check("/healthz", 200, "ok")
	check("/livez?verbose", 200, "[+]ping ok\n[+]log ok\n[+]etcd ok\n"+hook+"livez check passed\n")
	check("/healthz?verbose", 200, "[+]ping ok\n[+]log ok\n[+]etcd ok\n"+hook+"healthz check passed\n")
	check("/readyz?verbose", 200, "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]informer-sync ok\n"+hook+"[+]shutdown ok\nreadyz check passed\n")
	check("/readyz?verbose&exclude=etcd&exclude=nosuch&exclude=poststarthook/rbac/bootstrap-roles", 200,
		"[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n[+]etcd-readiness ok\n[+]informer-sync ok\n[+]poststarthook/rbac/bootstrap-roles excluded: ok\n[+]shutdown ok\n"+
			"warn: some health checks cannot be excluded: no matches for \"nosuch\"\nreadyz check passed\n")
	check("/readyz/etcd", 200, "ok")
	check("/readyz/shutdown", 200, "ok")
	check("/healthz/shutdown", 404, "404 page not found\n")
	check("/livez/etcd-readiness", 404, "404 page not found\n")
	check("/readyz/nosuch", 404, "404 page not found\n")
	check("/readyz/", 404, "404 page not found\n")

	storageErr = errors.New("error getting data from etcd: context deadline exceeded")
	check("/readyz/etcd", 500, "internal server error: error getting data from etcd: context deadline exceeded\n")
	check("/readyz", 500, "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\n[+]informer-sync ok\n"+hook+"[+]shutdown ok\nreadyz check failed\n")
	check("/readyz?exclude=etcd&exclude=etcd-readiness", 200, "ok")
	storageErr = nil

	ready = false
	check("/readyz", 500, "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[-]informer-sync failed: reason withheld\n"+hook+"[+]shutdown ok\nreadyz check failed\n")
	ready = true
	s.BeginShutdown()
	check("/readyz/shutdown", 500, "internal server error: process is shutting down\n")
	check("/livez", 200, "ok")
}
