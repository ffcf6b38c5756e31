package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// TestWatchBookmarks: a watch that allows bookmarks gets one carrying the
// revision of the latest change it has passed, even a change its selector
// filtered out; a watch that does not allow them gets none.
func TestWatchBookmarks(t *testing.T) {
	s := New(Config{Store: memory.New(), Catalogue: registry.NewCatalogue(), BookmarkInterval: 20 * time.Millisecond})
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, allow := range []bool{true, false} {
		rev := createConfigMap(t, srv.URL, "unlabelled-"+map[bool]string{true: "a", false: "b"}[allow])
		url := srv.URL + "/api/v1/namespaces/default/configmaps?watch=true&labelSelector=app%3Dweb&resourceVersion=" + rev
		if allow {
			url += "&allowWatchBookmarks=true"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		later := createConfigMap(t, srv.URL, "unlabelled-later-"+map[bool]string{true: "a", false: "b"}[allow])
		got := ""
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var ev struct {
				Type   string `json:"type"`
				Object struct {
					Metadata struct {
						ResourceVersion string `json:"resourceVersion"`
					} `json:"metadata"`
				} `json:"object"`
			}
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				got = ev.Type + "@" + ev.Object.Metadata.ResourceVersion
				break
			}
		}
		cancel()
		resp.Body.Close()
		want := ""
		if allow {
			want = "BOOKMARK@" + later
		}
		if got != want {
			t.Errorf("allowWatchBookmarks=%v: first event = %q, want %q", allow, got, want)
		}
	}
}

func createConfigMap(t *testing.T, base, name string) string {
	t.Helper()
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"}}`
	resp, err := http.Post(base+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating %s: %d %v", name, resp.StatusCode, err)
	}
	return out.Metadata.ResourceVersion
}

// TestWatchSelectorLeaveSendsThePreviousObject: a ConfigMap relabelled out
// of a watch's label selector is a DELETED event carrying the object as
// the watcher last saw it (still labelled app=web) at the update's
// revision, as kube-apiserver's watch cache sends it; relabelled back, an
// ADDED event with the new object.
func TestWatchSelectorLeaveSendsThePreviousObject(t *testing.T) {
	s := New(Config{Store: memory.New(), Catalogue: registry.NewCatalogue()})
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	base := srv.URL + "/api/v1/namespaces/default/configmaps"
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"leaving","labels":{"app":"web"}},"data":{"k":"v1"}}`
	resp, err := http.Post(base, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"?watch=true&labelSelector=app%3Dweb&resourceVersion="+created.Metadata.ResourceVersion, nil)
	w, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Body.Close()
	patchRV := func(patch string) string {
		req, _ := http.NewRequest(http.MethodPatch, base+"/leaving", strings.NewReader(patch))
		req.Header.Set("Content-Type", "application/merge-patch+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("patch %s: %d %v", patch, resp.StatusCode, err)
		}
		return out.Metadata.ResourceVersion
	}
	leftAt := patchRV(`{"metadata":{"labels":{"app":"db"}},"data":{"k":"v2"}}`)
	backAt := patchRV(`{"metadata":{"labels":{"app":"web"}},"data":{"k":"v3"}}`)
	want := []string{"DELETED app=web k=v1 @" + leftAt, "ADDED app=web k=v3 @" + backAt}
	sc := bufio.NewScanner(w.Body)
	for i := 0; i < len(want) && sc.Scan(); i++ {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct {
					Labels          map[string]string `json:"labels"`
					ResourceVersion string            `json:"resourceVersion"`
				} `json:"metadata"`
				Data map[string]string `json:"data"`
			} `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("event %d: %v: %s", i, err, sc.Bytes())
		}
		got := ev.Type + " app=" + ev.Object.Metadata.Labels["app"] + " k=" + ev.Object.Data["k"] + " @" + ev.Object.Metadata.ResourceVersion
		if got != want[i] {
			t.Errorf("event %d = %q, want %q", i, got, want[i])
		}
	}
}
