package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// pageCountingStore counts the pages listed.
type pageCountingStore struct {
	storage.Store
	lists atomic.Int64
}

func (c *pageCountingStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	c.lists.Add(1)
	return c.Store.List(ctx, prefix, opts)
}

// A paged list with a selector that drops items reads pages twice as large
// each time, as upstream's storage, not one storage call per object; paging
// through it still returns every match once, in order.
func TestSelectivePagedList(t *testing.T) {
	store := &pageCountingStore{Store: memory.New()}
	s := New(testConfig(store, registry.NewCatalogue()))
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s}
	for i := range 300 {
		ts.must(201, "POST", cmPath, mediaJSON, fmt.Sprintf(`{"metadata":{"name":"c%03d","labels":{"even":"%v"}}}`, i, i%2 == 0))
	}
	store.lists.Store(0)
	ts.must(200, "GET", cmPath+"?limit=1&labelSelector=none%3Dx", "", "")
	t.Logf("pages read: %d", store.lists.Load())
	if n := store.lists.Load(); n > 12 {
		t.Errorf("a limit-1 list matching nothing among 300 objects read %d pages, want about log2(300)", n)
	}
	var names []string
	cont := ""
	for range 200 {
		w := ts.do("GET", cmPath+"?limit=7&labelSelector=even%3Dtrue&continue="+url.QueryEscape(cont), "", "")
		var page struct {
			Metadata struct{ Continue string }
			Items    []struct{ Metadata struct{ Name string } }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || w.Code != 200 {
			t.Fatalf("page: %d %s", w.Code, w.Body)
		}
		for _, it := range page.Items {
			names = append(names, it.Metadata.Name)
		}
		if cont = page.Metadata.Continue; cont == "" {
			break
		}
	}
	if len(names) != 150 || names[0] != "c000" || names[149] != "c298" {
		t.Fatalf("paged through %d names (%v ... ), want the 150 even ones", len(names), names[:min(3, len(names))])
	}
	for i := 1; i < len(names); i++ {
		if names[i] <= names[i-1] {
			t.Fatalf("names out of order or repeated at %d: %s after %s", i, names[i], names[i-1])
		}
	}
}
