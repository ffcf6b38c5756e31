package apiserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// A write storage refuses as too large is tried once more without
// managedFields, as upstream's handlers do (not for apply); one still too
// large is upstream's 500 with etcd's text.
func TestWritesOverTheStorageBound(t *testing.T) {
	s := New(testConfig(storage.WithSizeLimit(memory.New(), 8<<10), registry.NewCatalogue()))
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s}
	var keys []string
	for i := range 200 {
		keys = append(keys, fmt.Sprintf(`"key-%03d":"%s"`, i, strings.Repeat("v", 20)))
	}
	body := `{"metadata":{"name":"big"},"data":{` + strings.Join(keys, ",") + `}}` // ~7 KiB, ~10 KiB with managedFields
	w := ts.do("POST", cmPath, mediaJSON, body)
	if w.Code != 201 || strings.Contains(w.Body.String(), "managedFields") {
		t.Fatalf("create = %d %.300s, want 201 without managedFields", w.Code, w.Body)
	}
	if got := ts.do("GET", cmPath+"/big", "", ""); got.Code != 200 || strings.Contains(got.Body.String(), "managedFields") {
		t.Errorf("stored = %d %.300s, want it stored without managedFields", got.Code, got.Body)
	}
	apply := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"},"data":{` + strings.Join(keys, ",") + `}}`
	if w := ts.do("PATCH", cmPath+"/applied?fieldManager=m", "application/apply-patch+yaml", apply); w.Code != 500 ||
		!strings.Contains(w.Body.String(), `"message":"etcdserver: request is too large"`) {
		t.Errorf("apply = %d %.300s, want upstream's 500 (apply is not tried again)", w.Code, w.Body)
	}
	huge := `{"metadata":{"name":"huge"},"data":{"a":"` + strings.Repeat("x", 9<<10) + `"}}`
	if w := ts.do("POST", cmPath, mediaJSON, huge); w.Code != 500 || !strings.Contains(w.Body.String(), `"message":"etcdserver: request is too large"`) {
		t.Errorf("create over the bound = %d %.300s, want upstream's 500", w.Code, w.Body)
	}
	if w := ts.do("PATCH", cmPath+"/big", mediaMergePatch, `{"data":{"a":"`+strings.Repeat("x", 9<<10)+`"}}`); w.Code != 500 {
		t.Errorf("patch over the bound = %d %.300s, want 500", w.Code, w.Body)
	}
}

// A long generateName is cut to 58 characters before the random suffix, as
// upstream's name generator does, so the name is still a DNS label.
func TestGenerateNameIsCut(t *testing.T) {
	ts := newTestServer(t)
	base := strings.Repeat("a", 70)
	got := ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"generateName":"`+base+`"}}`)
	if len(got.Name) != 63 || !strings.HasPrefix(got.Name, base[:58]) {
		t.Errorf("generated name %q (%d), want 58 of the base and 5 random characters", got.Name, len(got.Name))
	}
	// generateName is itself validated as a name prefix: 62 characters
	// pass for a namespace (a DNS label), and only the cut keeps the name
	// within 63.
	ns := ts.do("POST", "/api/v1/namespaces", mediaJSON, `{"metadata":{"generateName":"`+base[:62]+`"}}`)
	if ns.Code != 201 {
		t.Errorf("namespace with a 62-character generateName = %d %.300s, want 201", ns.Code, ns.Body)
	}
}
