package openapi

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/admitd/admitd/internal/registry"
)

// upstreamDir holds kube-apiserver 1.37.2's /openapi/v3 index and a few of
// its discovery documents, recorded by its record.sh.
const upstreamDir = "testdata/upstream"

func upstreamIndex(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(upstreamDir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for p, e := range idx.Paths {
		out[p] = e.ServerRelativeURL
	}
	return out
}

// isGroupVersionPath reports whether an index path is a group-version's
// (api/v1, apis/apps/v1) rather than a discovery endpoint's.
func isGroupVersionPath(p string) bool {
	return strings.HasPrefix(p, "api/") || strings.HasPrefix(p, "apis/") && strings.Count(p, "/") == 2
}

// TestIndexMatchesKubeAPIServer checks that the index lists the paths
// kube-apiserver's lists and, for every discovery endpoint, the same URL:
// the same hash, so the document is byte for byte upstream's.
func TestIndexMatchesKubeAPIServer(t *testing.T) {
	want := upstreamIndex(t)
	got := index(t, New(registry.NewCatalogue(), Options{ServiceAccountIssuerDiscovery: true}))
	if g, w := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); !slices.Equal(g, w) {
		t.Errorf("index paths = %v, want kube-apiserver's %v", g, w)
	}
	discovery := 0
	for p, u := range want {
		if isGroupVersionPath(p) {
			continue // their documents differ (see the package comment)
		}
		discovery++
		if got[p] != u {
			t.Errorf("index[%s] = %q, want kube-apiserver's %q", p, got[p], u)
		}
	}
	if discovery < 6 {
		t.Errorf("kube-apiserver's index has %d discovery paths, want at least 6", discovery)
	}
}

// TestDiscoveryDocumentsMatchKubeAPIServer compares recorded documents
// byte for byte, to show where one differs.
func TestDiscoveryDocumentsMatchKubeAPIServer(t *testing.T) {
	s := New(registry.NewCatalogue(), Options{ServiceAccountIssuerDiscovery: true})
	for p := range upstreamIndex(t) {
		file := filepath.Join(upstreamDir, strings.TrimPrefix(strings.ReplaceAll(p, "/", "_"), ".")+".json")
		want, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		rec := get(s, "/openapi/v3/"+p, "application/json")
		if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), want) {
			t.Errorf("GET /openapi/v3/%s = %d, differs from %s at %s", p, rec.Code, file, firstDifference(rec.Body.Bytes(), want))
		}
	}
}

func TestDiscoveryDocumentCaching(t *testing.T) {
	s := New(registry.NewCatalogue(), Options{})
	idx := index(t, s)
	for _, p := range []string{"api", "apis", "apis/apps", "version"} {
		u := idx[p]
		rec := get(s, u, "application/json")
		hash := u[strings.Index(u, "hash=")+len("hash="):]
		if rec.Code != http.StatusOK || rec.Header().Get("Etag") != strconv.Quote(hash) || rec.Header().Get("Cache-Control") != "public, immutable" {
			t.Errorf("GET %s = %d, Etag %s, Cache-Control %q; want 200, the index hash, public, immutable",
				u, rec.Code, rec.Header().Get("Etag"), rec.Header().Get("Cache-Control"))
		}
		if rec := get(s, "/openapi/v3/"+p+"?hash=STALE", "application/json"); rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != u {
			t.Errorf("GET %s with a stale hash = %d to %q, want 301 to %q", p, rec.Code, rec.Header().Get("Location"), u)
		}
	}
	for _, p := range []string{openIDConfigPath, openIDKeySetPath} {
		if _, ok := idx[p]; ok {
			t.Errorf("index lists %s without service account issuer discovery", p)
		}
	}
}

// TestCustomResourceGroupsHaveNoGroupDocument: apiextensions-apiserver
// publishes no document for /apis/<group> of a CRD's group.
func TestCustomResourceGroupsHaveNoGroupDocument(t *testing.T) {
	cat := registry.NewCatalogue()
	cat.SetCustom("crontabs.stable.example.com", registry.CustomResources(crontabCRD()))
	s := New(cat, Options{})
	idx := index(t, s)
	if _, ok := idx["apis/stable.example.com/v1"]; !ok {
		t.Fatalf("index lacks apis/stable.example.com/v1")
	}
	if u, ok := idx["apis/stable.example.com"]; ok {
		t.Errorf("index lists apis/stable.example.com (%s), want none for a CRD's group", u)
	}
	if rec := get(s, "/openapi/v3/apis/stable.example.com", "application/json"); rec.Code != http.StatusNotFound {
		t.Errorf("GET /openapi/v3/apis/stable.example.com = %d, want 404", rec.Code)
	}
}
