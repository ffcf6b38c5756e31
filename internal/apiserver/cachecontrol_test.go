package apiserver

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// A handler behind the deadline writer sees the outer Cache-Control, as
// behind upstream's timeout writer: one that adds its own (a reverse proxy
// copying a backend's) answers both values.
func TestHandlerSeesOuterCacheControl(t *testing.T) {
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.Extra = map[string]http.Handler{"/proxied": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Add("Cache-Control", "max-age=5")
		_, _ = w.Write([]byte("from the backend"))
	})}
	s := New(cfg)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/proxied", nil))
	if got, want := w.Header().Values("Cache-Control"), []string{"no-cache, private", "max-age=5"}; w.Code != http.StatusOK || !slices.Equal(got, want) {
		t.Errorf("GET /proxied = %d, Cache-Control %q; want 200, %q", w.Code, got, want)
	}
}
