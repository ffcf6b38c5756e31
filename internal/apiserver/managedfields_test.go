package apiserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// testServer is a whole API server over an in-memory store, driven through
// ServeHTTP.
type testServer struct {
	t testing.TB
	s *Server
}

func newTestServer(t testing.TB, plugins ...admission.NamedPlugin) *testServer {
	t.Helper()
	s := New(testConfig(memory.New(), registry.NewCatalogue(), plugins...))
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	return &testServer{t: t, s: s}
}

// testConfig is the configuration internal/server would give a server over
// store, without the admission sources: custom resources served and typed
// from their definitions.
func testConfig(store storage.Store, cat *registry.Catalogue, plugins ...admission.NamedPlugin) Config {
	return Config{Store: store, Catalogue: cat, Admission: admission.NewChain(plugins...),
		Observers:            []WriteObserver{CustomResourceSync(store, cat, slog.Default())},
		CustomTypeConverters: admissionsource.NewCRDTypeConverters(store, cat)}
}

// do sends one request and returns the recorded response.
func (ts *testServer) do(method, path, contentType, body string) *httptest.ResponseRecorder {
	ts.t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	r.Header.Set("User-Agent", "unit-test/v1.0 (linux/amd64)")
	w := httptest.NewRecorder()
	ts.s.ServeHTTP(w, r)
	return w
}

// must sends a request and fails the test unless it answers code; it
// returns the decoded object.
func (ts *testServer) must(code int, method, path, contentType, body string) *metav1.PartialObjectMetadata {
	ts.t.Helper()
	w := ts.do(method, path, contentType, body)
	if w.Code != code {
		ts.t.Fatalf("%s %s = %d %s, want %d", method, path, w.Code, w.Body.String(), code)
	}
	obj := &metav1.PartialObjectMetadata{}
	if err := json.Unmarshal(w.Body.Bytes(), obj); err != nil {
		ts.t.Fatalf("decoding %s: %v", w.Body.String(), err)
	}
	return obj
}

// managers summarises managedFields as "manager/operation[/subresource]",
// sorted (entries are ordered by time, to the second).
func managers(m *metav1.PartialObjectMetadata) []string {
	var out []string
	for _, e := range m.ManagedFields {
		s := e.Manager + "/" + string(e.Operation)
		if e.Subresource != "" {
			s += "/" + e.Subresource
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// fieldsOf returns the FieldsV1 JSON of manager's entry.
func fieldsOf(m *metav1.PartialObjectMetadata, manager string) string {
	for _, e := range m.ManagedFields {
		if e.Manager == manager && e.FieldsV1 != nil {
			return string(e.FieldsV1.Raw)
		}
	}
	return ""
}

const cmPath = "/api/v1/namespaces/default/configmaps"

func TestWritesRecordUpdateManagers(t *testing.T) {
	ts := newTestServer(t)
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"1"}}`
	got := ts.must(201, "POST", cmPath+"?fieldManager=creator", mediaJSON, cm)
	if want := []string{"creator/Update"}; !reflect.DeepEqual(managers(got), want) {
		t.Fatalf("managers after create = %v, want %v", managers(got), want)
	}
	if f := fieldsOf(got, "creator"); f != `{"f:data":{".":{},"f:a":{}}}` {
		t.Errorf("creator fields = %s", f)
	}
	if got.ManagedFields[0].Time == nil || got.ManagedFields[0].APIVersion != "v1" || got.ManagedFields[0].FieldsType != "FieldsV1" {
		t.Errorf("entry = %+v, want a time, apiVersion v1 and FieldsV1", got.ManagedFields[0])
	}
	// No fieldManager: the manager is the User-Agent's product.
	got = ts.must(200, "PATCH", cmPath+"/cfg", mediaMergePatch, `{"data":{"b":"2"}}`)
	if want := []string{"creator/Update", "unit-test/Update"}; !reflect.DeepEqual(managers(got), want) {
		t.Fatalf("managers after patch = %v, want %v", managers(got), want)
	}
	// A strategic patch and a PUT take fields over; unit-test loses its only
	// one, creator keeps the data map itself.
	got = ts.must(200, "PATCH", cmPath+"/cfg?fieldManager=patcher", mediaStrategicPatch, `{"data":{"a":"3"}}`)
	put := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","resourceVersion":"` + got.ResourceVersion + `"},"data":{"a":"3","b":"4"}}`
	got = ts.must(200, "PUT", cmPath+"/cfg?fieldManager=replacer", mediaJSON, put)
	if want := []string{"creator/Update", "patcher/Update", "replacer/Update"}; !reflect.DeepEqual(managers(got), want) {
		t.Errorf("managers after put = %v, want %v", managers(got), want)
	}
}

func TestNoOpWritesKeepResourceVersionAndManagedFields(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "POST", cmPath+"?fieldManager=creator", mediaJSON, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"1"}}`)
	before := ts.must(200, "PATCH", cmPath+"/cfg?fieldManager=labeler", mediaMergePatch, `{"metadata":{"labels":{"tier":"gold"}}}`)
	writes := []struct{ name, method, query, mt, body string }{
		{"merge", "PATCH", "?fieldManager=labeler", mediaMergePatch, `{"metadata":{"labels":{"tier":"gold"}}}`},
		{"strategic", "PATCH", "?fieldManager=other", mediaStrategicPatch, `{"data":{"a":"1"}}`},
		{"json", "PATCH", "", mediaJSONPatch, `[{"op":"replace","path":"/data/a","value":"1"}]`},
		{"put", "PUT", "?fieldManager=replacer", mediaJSON, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","labels":{"tier":"gold"},"resourceVersion":"` +
			before.ResourceVersion + `"},"data":{"a":"1"}}`},
	}
	for _, wr := range writes {
		got := ts.must(200, wr.method, cmPath+"/cfg"+wr.query, wr.mt, wr.body)
		if got.ResourceVersion != before.ResourceVersion {
			t.Errorf("%s: resourceVersion = %s, want unchanged %s", wr.name, got.ResourceVersion, before.ResourceVersion)
		}
		if !reflect.DeepEqual(got.ManagedFields, before.ManagedFields) {
			t.Errorf("%s: managedFields = %+v, want unchanged %+v", wr.name, got.ManagedFields, before.ManagedFields)
		}
	}
}

// corruptor is a mutating plugin that leaves managedFields invalid.
type corruptor struct{}

func (corruptor) Handles(admission.Operation) bool { return true }

func (corruptor) Admit(_ context.Context, a *admission.Attributes) error {
	accessor(a.Object).SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "broken", Operation: "Bogus"}})
	return nil
}

// inPlaceCorruptor breaks the managedFields entries in place, in the slice
// the object already had (as decoding a patched object into it can).
type inPlaceCorruptor struct{}

func (inPlaceCorruptor) Handles(admission.Operation) bool { return true }

func (inPlaceCorruptor) Admit(_ context.Context, a *admission.Attributes) error {
	for i := range accessor(a.Object).GetManagedFields() {
		accessor(a.Object).GetManagedFields()[i].Operation = "Bogus"
	}
	return nil
}

func TestAdmissionCannotCorruptManagedFields(t *testing.T) {
	for name, plugin := range map[string]admission.Handler{"replaced": corruptor{}, "in place": inPlaceCorruptor{}} {
		t.Run(name, func(t *testing.T) { testAdmissionCannotCorruptManagedFields(t, plugin) })
	}
}

func testAdmissionCannotCorruptManagedFields(t *testing.T, plugin admission.Handler) {
	ts := newTestServer(t, admission.NamedPlugin{Name: "corruptor", Plugin: plugin})
	w := ts.do("POST", cmPath+"?fieldManager=creator", mediaJSON, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"1"}}`)
	if w.Code != 201 {
		t.Fatalf("create = %d %s", w.Code, w.Body)
	}
	warning := "299 - \".metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: operation must be `Apply` or `Update`\""
	if got := w.Header().Get("Warning"); got != warning {
		t.Errorf("Warning = %s, want %s", got, warning)
	}
	got := &metav1.PartialObjectMetadata{}
	if err := json.Unmarshal(w.Body.Bytes(), got); err != nil {
		t.Fatal(err)
	}
	if want := []string{"creator/Update"}; !reflect.DeepEqual(managers(got), want) {
		t.Errorf("managers = %v, want the pre-admission %v", managers(got), want)
	}
}

func TestManagerName(t *testing.T) {
	tests := []struct{ fieldManager, userAgent, want string }{
		{"kubectl-label", "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07", "kubectl-label"},
		{"", "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07", "kubectl"},
		{"", "Go-http-client/1.1", "Go-http-client"},
		{"", "bad\x00\tname/1", "badname"},
		{"", strings.Repeat("é", 100), strings.Repeat("é", 64)},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := managerName(tt.fieldManager, tt.userAgent); got != tt.want {
			t.Errorf("managerName(%q, %q) = %q, want %q", tt.fieldManager, tt.userAgent, got, tt.want)
		}
	}
}

// Every built-in resource that stores objects merges with its typed
// schema, never the deduced fallback (which makes every list atomic).
func TestBuiltinResourcesHaveTypedSchemas(t *testing.T) {
	cat := registry.NewCatalogue()
	f := newFieldManagers(nil)
	deduced := managedfields.NewDeducedTypeConverter()
	for _, res := range cat.Resources() {
		if res.Unstructured || !res.HasVerb("update") {
			continue
		}
		if f.typeConverter(res) == deduced {
			t.Errorf("typeConverter(%v) is the deduced one, want the typed schema", res.GroupVersionResource)
		}
		if _, err := f.get(res, ""); err != nil {
			t.Errorf("field manager of %v: %v", res.GroupVersionResource, err)
		}
	}
}

func TestKeepManagedFieldsTimes(t *testing.T) {
	t0, t1 := metav1.NewTime(time.Unix(1000, 0)), metav1.NewTime(time.Unix(2000, 0))
	entry := func(tm metav1.Time, manager string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: "Apply", APIVersion: "v1", Time: &tm,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}}
	}
	tests := []struct {
		name     string
		newData  string
		newEntry metav1.ManagedFieldsEntry
		wantTime metav1.Time
	}{
		{"only the time moved", "1", entry(t1, "m"), t0},
		{"the object changed", "2", entry(t1, "m"), t1},
		{"the manager changed", "1", entry(t1, "n"), t1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := cmWith("1", entry(t0, "m"))
			obj := cmWith(tt.newData, tt.newEntry)
			keepManagedFieldsTimes(obj, old)
			if got := *accessor(obj).GetManagedFields()[0].Time; !got.Equal(&tt.wantTime) {
				t.Errorf("time = %v, want %v", got, tt.wantTime)
			}
		})
	}
}

func cmWith(value string, e metav1.ManagedFieldsEntry) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	cm.APIVersion, cm.Kind, cm.Name = "v1", "ConfigMap", "cfg"
	cm.Data = map[string]string{"a": value}
	cm.ManagedFields = []metav1.ManagedFieldsEntry{e}
	return cm
}

// recorder is a mutating plugin that remembers what it was called with.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) Handles(admission.Operation) bool { return true }

func (r *recorder) Admit(_ context.Context, a *admission.Attributes) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	opts := ""
	if a.Options != nil {
		opts = a.Options.GetObjectKind().GroupVersionKind().Kind
		if co, ok := a.Options.(*metav1.CreateOptions); ok {
			opts += ":" + co.FieldManager
		}
		if uo, ok := a.Options.(*metav1.UpdateOptions); ok {
			opts += ":" + uo.FieldManager
		}
	}
	r.calls = append(r.calls, string(a.Operation)+" "+opts)
	return nil
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// A webhook's patch sends the object through JSON, which keeps whole
// seconds of each managedFields time: entries that come back so are the
// ones admission left alone, and are not checked again.
func TestManagedFieldsThroughJSONAreTheSameButTimes(t *testing.T) {
	now := metav1.NewTime(time.Unix(1700000000, 123456789))
	before := []metav1.ManagedFieldsEntry{{Manager: "creator", Operation: "Update", APIVersion: "v1", Time: &now,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:a":{}}}`)}}}
	cm := cmWith("1", before[0])
	data, err := json.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	back := &corev1.ConfigMap{}
	if err := json.Unmarshal(data, back); err != nil {
		t.Fatal(err)
	}
	if back.ManagedFields[0].Time.Equal(&now) {
		t.Fatal("JSON kept the nanoseconds; this test no longer shows what it is for")
	}
	if !sameManagedFieldsButTimes(before, back.ManagedFields) {
		t.Errorf("entries that only went through JSON are taken for changed: %+v", back.ManagedFields)
	}
	changed := copyManagedFields(back.ManagedFields)
	changed[0].FieldsV1.Raw = []byte(`{"f:data":{}}`)
	if sameManagedFieldsButTimes(before, changed) {
		t.Error("entries whose fields changed are taken for the same")
	}
}
