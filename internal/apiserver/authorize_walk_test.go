package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/admitd/admitd/internal/auth"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// countingStore counts every read and write that reaches storage.
type countingStore struct {
	storage.Store
	calls atomic.Int64
}

func (c *countingStore) Get(ctx context.Context, key string) (storage.KeyValue, error) {
	c.calls.Add(1)
	return c.Store.Get(ctx, key)
}

func (c *countingStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	c.calls.Add(1)
	return c.Store.List(ctx, prefix, opts)
}

func (c *countingStore) Create(ctx context.Context, key string, value []byte) (storage.KeyValue, error) {
	c.calls.Add(1)
	return c.Store.Create(ctx, key, value)
}

func (c *countingStore) Update(ctx context.Context, key string, value []byte, rev int64) (storage.KeyValue, error) {
	c.calls.Add(1)
	return c.Store.Update(ctx, key, value, rev)
}

func (c *countingStore) Delete(ctx context.Context, key string, rev int64) (storage.KeyValue, int64, error) {
	c.calls.Add(1)
	return c.Store.Delete(ctx, key, rev)
}

func (c *countingStore) Watch(ctx context.Context, prefix string, after int64) (storage.Watcher, error) {
	c.calls.Add(1)
	return c.Store.Watch(ctx, prefix, after)
}

// countingPlugin counts admission calls of both phases.
type countingPlugin struct{ calls atomic.Int64 }

func (p *countingPlugin) Handles(admission.Operation) bool { return true }

func (p *countingPlugin) Admit(context.Context, *admission.Attributes) error {
	p.calls.Add(1)
	return nil
}

func (p *countingPlugin) Validate(context.Context, *admission.Attributes) error {
	p.calls.Add(1)
	return nil
}

// routeRequest is one request of the walk.
type routeRequest struct{ method, path string }

// everyRoute lists a request for each verb of each resource and
// subresource the catalogue serves, collection and object, namespaced or
// not, then the discovery, OpenAPI and extra paths.
func everyRoute(cat *registry.Catalogue, extra []string) []routeRequest {
	var out []routeRequest
	for _, res := range cat.Resources() {
		base := "/apis/" + res.Group + "/" + res.Version
		if res.Group == "" {
			base = "/api/" + res.Version
		}
		if res.Namespaced {
			base += "/namespaces/ns"
		}
		coll := base + "/" + res.Resource
		item := coll + "/name"
		out = append(out, routeRequest{"GET", coll}, routeRequest{"GET", coll + "?watch=true"}, routeRequest{"POST", coll},
			routeRequest{"DELETE", coll}, routeRequest{"GET", item}, routeRequest{"PUT", item}, routeRequest{"PATCH", item},
			routeRequest{"DELETE", item})
		for _, sub := range res.Subresources {
			for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
				out = append(out, routeRequest{m, item + "/" + sub.Name})
			}
		}
	}
	for _, p := range append([]string{"/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/openapi/v2",
		"/openapi/v3", "/openapi/v3/api/v1", "/.well-known/openid-configuration", "/openid/v1/jwks", "/nonexistent"}, extra...) {
		out = append(out, routeRequest{"GET", p})
	}
	return out
}

// Walking every route as a user the authorizer does not allow: each
// answer is 403 and nothing reaches storage, admission or an extra handler.
func TestEveryRouteIsAuthorizedFirst(t *testing.T) {
	store := &countingStore{Store: memory.New()}
	cat := registry.NewCatalogue()
	plugin := &countingPlugin{}
	cfg := testConfig(store, cat, admission.NamedPlugin{Name: "Counting", Plugin: plugin})
	var asked atomic.Int64
	cfg.Authorizer = auth.AuthorizerFunc(func(context.Context, auth.Attributes) (auth.Decision, string, error) {
		asked.Add(1)
		return auth.DecisionNoOpinion, "", nil
	})
	var extraCalls atomic.Int64
	cfg.Extra = map[string]http.Handler{"/metrics": http.HandlerFunc(func(http.ResponseWriter, *http.Request) { extraCalls.Add(1) })}
	s := New(cfg)
	store.calls.Store(0)
	routes := everyRoute(cat, []string{"/metrics"})
	if len(routes) < 500 {
		t.Fatalf("only %d routes: the catalogue is not walked", len(routes))
	}
	for _, rt := range routes {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(rt.method, rt.path, strings.NewReader(`{}`))
		r.Header.Set("Content-Type", "application/merge-patch+json")
		s.ServeHTTP(w, r)
		if w.Code != http.StatusForbidden {
			t.Errorf("%s %s = %d %s, want 403", rt.method, rt.path, w.Code, w.Body.String())
		}
	}
	if n := store.calls.Load(); n != 0 {
		t.Errorf("storage was called %d times by unauthorized requests", n)
	}
	if n := plugin.calls.Load(); n != 0 {
		t.Errorf("admission was called %d times by unauthorized requests", n)
	}
	if n := extraCalls.Load(); n != 0 {
		t.Errorf("an extra handler served %d unauthorized requests", n)
	}
	if n := asked.Load(); n != int64(len(routes)) {
		t.Errorf("authorizer asked %d times for %d requests", n, len(routes))
	}
}
