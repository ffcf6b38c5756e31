package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// TestStreamedTablesAndMetadataListsAreWhole: a Table or a
// PartialObjectMetadataList in JSON, written a row at a time by
// serveJSONCollection, is byte for byte the whole answer made from the
// objects at once (listObjects, transformList), in both meta.k8s.io
// versions, with each includeObject, limits, selectors and continue
// tokens, across storage pages.
func TestStreamedTablesAndMetadataListsAreWhole(t *testing.T) {
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	cfg.Now = func() time.Time { return at }
	s := New(cfg)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s}
	res := configMaps(t, ts)
	accepts := []string{
		"application/json;as=Table;v=v1;g=meta.k8s.io",
		"application/json;as=Table;v=v1beta1;g=meta.k8s.io",
		"application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
		"application/json;as=PartialObjectMetadataList;v=v1beta1;g=meta.k8s.io",
	}
	queries := []string{"", "limit=5", "labelSelector=p%3Deven", "limit=3&labelSelector=p%3Dodd", "fieldSelector=metadata.name%3Dnone",
		"includeObject=Object", "includeObject=None&limit=7"}
	check := func() {
		for _, accept := range accepts {
			for _, query := range queries {
				if cont := checkCollection(t, ts, res, accept, query); cont != "" {
					checkCollection(t, ts, res, accept, query+"&continue="+url.QueryEscape(cont))
				}
			}
		}
	}
	check() // only kube-root-ca.crt
	for i := 0; i < listStreamPage+9; i++ {
		ts.must(http.StatusCreated, http.MethodPost, cmPath, mediaJSON, configMapOf(i, yamlValues[i%len(yamlValues)]))
	}
	check()
}

// checkCollection lists with query, taking accept, and checks the answer
// is the one made at once at its resourceVersion; it returns the continue
// token.
func checkCollection(t *testing.T, ts *testServer, res *registry.Resource, accept, query string) string {
	t.Helper()
	r, w := listAs(t, ts, accept, query, mediaJSON)
	var got listMeta
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("%s ?%s: %v", accept, query, err)
	}
	whole, _, items := wholeAnswer(t, ts, res, r, query, got.Metadata.ResourceVersion)
	var want bytes.Buffer
	if err := json.NewEncoder(&want).Encode(whole); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.Body.Bytes(), want.Bytes()) {
		t.Errorf("%s ?%s: streamed answer differs from the whole one (%d items, %d vs %d bytes)\n%s", accept, query, items, w.Body.Len(), want.Len(),
			firstDifference(w.Body.String(), want.String()))
	}
	return got.Metadata.Continue
}
