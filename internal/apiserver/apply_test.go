package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/admitd/admitd/pkg/admission"
)

const cfgApplyYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  a: "1"
`

func TestApplyCreateUpdateConflictForce(t *testing.T) {
	rec := &recorder{}
	ts := newTestServer(t, admission.NamedPlugin{Name: "recorder", Plugin: rec})
	path := cmPath + "/cfg?fieldManager="

	got := ts.must(201, "PATCH", path+"alice", mediaApplyPatch, cfgApplyYAML)
	if want := []string{"CREATE CreateOptions:alice"}; !reflect.DeepEqual(rec.take(), want) {
		t.Errorf("admission of an apply that creates: want %v", want)
	}
	if want := []string{"alice/Apply"}; !reflect.DeepEqual(managers(got), want) {
		t.Fatalf("managers = %v, want %v", managers(got), want)
	}
	if f := fieldsOf(got, "alice"); f != `{"f:data":{"f:a":{}}}` {
		t.Errorf("alice's fields = %s", f)
	}

	// The body may be JSON too; the applier keeps its fields.
	ts.must(200, "PATCH", path+"alice", mediaApplyPatch, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"1","b":"2"}}`)
	if want := []string{"UPDATE UpdateOptions:alice"}; !reflect.DeepEqual(rec.take(), want) {
		t.Errorf("admission of an apply that updates: want %v", want)
	}

	bob := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"9"}}`
	st := statusOf(t, ts.do("PATCH", path+"bob", mediaApplyPatch, bob))
	wantCause := metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "alice"`, Field: ".data.a"}
	if st.Code != 409 || st.Reason != metav1.StatusReasonConflict || st.Message != `Apply failed with 1 conflict: conflict with "alice": .data.a` ||
		st.Details == nil || !reflect.DeepEqual(st.Details.Causes, []metav1.StatusCause{wantCause}) {
		t.Fatalf("conflicting apply = %+v %+v, want a 409 with cause %+v", st, st.Details, wantCause)
	}

	got = ts.must(200, "PATCH", path+"bob&force=true", mediaApplyPatch, bob)
	if want := []string{"alice/Apply", "bob/Apply"}; !reflect.DeepEqual(managers(got), want) {
		t.Fatalf("managers after force = %v, want %v", managers(got), want)
	}
	if a, b := fieldsOf(got, "alice"), fieldsOf(got, "bob"); a != `{"f:data":{"f:b":{}}}` || b != `{"f:data":{"f:a":{}}}` {
		t.Errorf("after force alice owns %s and bob %s, want b and a", a, b)
	}

	// Two managers in conflict are listed by manager.
	ts.must(200, "PATCH", cmPath+"/cfg?fieldManager=carol", mediaMergePatch, `{"data":{"c":"3"}}`)
	all := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"0","b":"0","c":"0"}}`
	st = statusOf(t, ts.do("PATCH", path+"dave", mediaApplyPatch, all))
	want := "Apply failed with 3 conflicts: conflicts with \"alice\":\n- .data.b\nconflicts with \"bob\":\n- .data.a\nconflicts with \"carol\" using v1:\n- .data.c"
	if st.Code != 409 || st.Message != want {
		t.Errorf("apply against three managers = %d %q, want 409 %q", st.Code, st.Message, want)
	}
}

func TestApplyNoOpKeepsResourceVersion(t *testing.T) {
	ts := newTestServer(t)
	first := ts.must(201, "PATCH", cmPath+"/cfg?fieldManager=alice", mediaApplyPatch, cfgApplyYAML)
	// Age the stored timestamp, as if the first apply were long ago.
	ageManagedFields(t, ts, "/registry/core/configmaps/default/cfg", time.Hour)
	aged := ts.must(200, "GET", cmPath+"/cfg", "", "")
	again := ts.must(200, "PATCH", cmPath+"/cfg?fieldManager=alice", mediaApplyPatch, cfgApplyYAML)
	if again.ResourceVersion != aged.ResourceVersion {
		t.Errorf("resourceVersion after a no-op apply = %s, want %s", again.ResourceVersion, aged.ResourceVersion)
	}
	if !reflect.DeepEqual(again.ManagedFields, aged.ManagedFields) {
		t.Errorf("managedFields after a no-op apply = %+v, want %+v", again.ManagedFields, aged.ManagedFields)
	}
	if aged.ManagedFields[0].Time.Equal(first.ManagedFields[0].Time) {
		t.Fatal("ageing the stored timestamp did not work")
	}
	changed := ts.must(200, "PATCH", cmPath+"/cfg?fieldManager=alice", mediaApplyPatch, cfgApplyYAML+`  b: "2"`+"\n")
	if changed.ResourceVersion == aged.ResourceVersion || changed.ManagedFields[0].Time.Equal(aged.ManagedFields[0].Time) {
		t.Errorf("an apply that changes data kept resourceVersion %s and time %v", changed.ResourceVersion, changed.ManagedFields[0].Time)
	}
}

// ageManagedFields moves the stored object's managedFields times back by d.
func ageManagedFields(t *testing.T, ts *testServer, key string, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	kv, err := ts.s.store.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(kv.Value); err != nil {
		t.Fatal(err)
	}
	entries := u.GetManagedFields()
	for i := range entries {
		entries[i].Time = &metav1.Time{Time: entries[i].Time.Add(-d)}
	}
	u.SetManagedFields(entries)
	data, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.s.store.Update(ctx, key, data, kv.ModRevision); err != nil {
		t.Fatal(err)
	}
}

func TestApplyRequestErrors(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "PATCH", cmPath+"/cfg?fieldManager=alice", mediaApplyPatch, cfgApplyYAML)
	tests := []struct {
		name, query, mt, body string
		code                  int32
		message               string
	}{
		{"no fieldManager", "", mediaApplyPatch, cfgApplyYAML, 422,
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
		{"force on a merge patch", "?force=true", mediaMergePatch, `{}`, 422,
			`PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`},
		{"not YAML", "?fieldManager=m", mediaApplyPatch, "a: [", 400,
			"error encoding patch: yaml: line 1: did not find expected node content"},
		{"not an object", "?fieldManager=m", mediaApplyPatch, "- a", 400,
			"error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{"wrong kind", "?fieldManager=m", mediaApplyPatch, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"cfg"}}`, 400,
			"invalid object type: /v1, Kind=Secret"},
		{"managedFields set", "?fieldManager=m", mediaApplyPatch,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","managedFields":[{"manager":"x"}]}}`, 400, "metadata.managedFields must be nil"},
		{"other name", "?fieldManager=m", mediaApplyPatch, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}`, 400,
			"the name of the object (other) does not match the name on the URL (cfg)"},
		{"duplicate field, strict", "?fieldManager=m&fieldValidation=Strict", mediaApplyPatch, cfgApplyYAML + "  a: \"1\"\n", 400,
			"error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key \"a\" already set in map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := statusOf(t, ts.do("PATCH", cmPath+"/cfg"+tt.query, tt.mt, tt.body))
			if st.Code != tt.code || st.Message != tt.message {
				t.Errorf("PATCH = %d %q, want %d %q", st.Code, st.Message, tt.code, tt.message)
			}
		})
	}
}

func TestApplyStatusSubresource(t *testing.T) {
	ts := newTestServer(t)
	const deployPath = "/apis/apps/v1/namespaces/default/deployments/web"
	deploy := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,
	  "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	status := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"status":{"observedGeneration":1,"replicas":2}}`
	if w := ts.do("PATCH", deployPath+"/status?fieldManager=ctrl", mediaApplyPatch, status); w.Code != 404 {
		t.Errorf("status apply to a missing object = %d, want 404", w.Code)
	}
	ts.must(201, "PATCH", deployPath+"?fieldManager=user", mediaApplyPatch, deploy)
	got := ts.must(200, "PATCH", deployPath+"/status?fieldManager=ctrl", mediaApplyPatch, status)
	if want := []string{"ctrl/Apply/status", "user/Apply"}; !reflect.DeepEqual(managers(got), want) {
		t.Errorf("managers = %v, want %v", managers(got), want)
	}
	if f := fieldsOf(got, "ctrl"); f != `{"f:status":{"f:observedGeneration":{},"f:replicas":{}}}` {
		t.Errorf("ctrl's fields = %s", f)
	}
	// Status sent to the main resource is neither stored nor owned.
	got = ts.must(200, "PATCH", deployPath+"?fieldManager=user", mediaApplyPatch, deploy[:len(deploy)-1]+`,"status":{"replicas":7}}`)
	if f := fieldsOf(got, "user"); json.Valid([]byte(f)) && containsKey(f, "f:status") {
		t.Errorf("user owns status through the main resource: %s", f)
	}
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema: &schema
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v1beta1
    served: true
    storage: false
    subresources: {status: {}}
    schema: *schema
`

func TestApplyCustomResource(t *testing.T) {
	ts := newTestServer(t)
	crd := ts.must(201, "PATCH", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com?fieldManager=admin", mediaApplyPatch, widgetCRD)
	want := `{"f:spec":{"f:group":{},"f:names":{"f:kind":{},"f:listKind":{},"f:plural":{},"f:singular":{}},"f:scope":{},"f:versions":{}}}`
	if f := fieldsOf(crd, "admin"); f != want {
		t.Errorf("admin's CRD fields = %s, want %s (versions is an atomic list)", f, want)
	}
	path := "/apis/example.com/v1/namespaces/default/widgets/w1"
	widget := func(spec string) string {
		return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":` + spec + `}`
	}
	ts.must(201, "PATCH", path+"?fieldManager=alice", mediaApplyPatch, widget(`{"size":1,"ports":[{"name":"http","port":80}]}`))
	// ports is a map-list in the schema: bob's item merges with alice's.
	ts.must(200, "PATCH", path+"?fieldManager=bob", mediaApplyPatch, widget(`{"ports":[{"name":"https","port":443}]}`))
	w := ts.do("GET", path, "", "")
	var got struct {
		Spec struct {
			Ports []map[string]any `json:"ports"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || len(got.Spec.Ports) != 2 {
		t.Fatalf("ports after two appliers = %s (%v), want http and https", w.Body, err)
	}
	st := statusOf(t, ts.do("PATCH", path+"?fieldManager=bob", mediaApplyPatch, widget(`{"size":2}`)))
	if st.Code != 409 || st.Message != `Apply failed with 1 conflict: conflict with "alice": .spec.size` {
		t.Errorf("conflicting apply = %d %q", st.Code, st.Message)
	}
	// The other served version sees the same owners.
	beta := `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":3}}`
	st = statusOf(t, ts.do("PATCH", "/apis/example.com/v1beta1/namespaces/default/widgets/w1?fieldManager=dave", mediaApplyPatch, beta))
	if st.Code != 409 || st.Message != `Apply failed with 1 conflict: conflict with "alice": .spec.size` {
		t.Errorf("conflicting apply through v1beta1 = %d %q", st.Code, st.Message)
	}
	status := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"status":{"ready":true}}`
	m := ts.must(200, "PATCH", path+"/status?fieldManager=ctrl", mediaApplyPatch, status)
	if want := []string{"alice/Apply", "bob/Apply", "ctrl/Apply/status"}; !reflect.DeepEqual(managers(m), want) {
		t.Errorf("managers = %v, want %v", managers(m), want)
	}
}

func containsKey(fieldsJSON, key string) bool {
	var m map[string]any
	_ = json.Unmarshal([]byte(fieldsJSON), &m)
	_, ok := m[key]
	return ok
}

// statusOf decodes a Status response.
func statusOf(t *testing.T, w *httptest.ResponseRecorder) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Kind != "Status" {
		t.Fatalf("response %d %s is not a Status (%v)", w.Code, w.Body, err)
	}
	return st
}

func TestApplyDryRunCreatesNothing(t *testing.T) {
	ts := newTestServer(t)
	got := ts.must(201, "PATCH", cmPath+"/cfg?fieldManager=alice&dryRun=All", mediaApplyPatch, cfgApplyYAML)
	if want := []string{"alice/Apply"}; !reflect.DeepEqual(managers(got), want) {
		t.Errorf("dry-run managers = %v, want %v", managers(got), want)
	}
	if w := ts.do("GET", cmPath+"/cfg", "", ""); w.Code != 404 {
		t.Errorf("GET after a dry-run apply = %d, want 404", w.Code)
	}
}

func TestScaleWritesRecordTheScaleSubresource(t *testing.T) {
	ts := newTestServer(t)
	const deployPath = "/apis/apps/v1/namespaces/default/deployments/web"
	deploy := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,
	  "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	ts.must(201, "PATCH", deployPath+"?fieldManager=user", mediaApplyPatch, deploy)
	if w := ts.do("PATCH", deployPath+"/scale", mediaMergePatch, `{"spec":{"replicas":3}}`); w.Code != 200 {
		t.Fatalf("scale = %d %s", w.Code, w.Body)
	}
	got := ts.must(200, "GET", deployPath, "", "")
	if want := []string{"unit-test/Update/scale", "user/Apply"}; !reflect.DeepEqual(managers(got), want) {
		t.Errorf("managers = %v, want %v", managers(got), want)
	}
	if f := fieldsOf(got, "unit-test"); f != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("scaler's fields = %s", f)
	}
}

func BenchmarkServerSideApply(b *testing.B) {
	for _, bc := range []struct{ name, second string }{{"no-op", "1"}, {"change", "%d"}} {
		b.Run(bc.name, func(b *testing.B) {
			ts := newTestServer(b)
			ts.do("PATCH", cmPath+"/cfg?fieldManager=alice", mediaApplyPatch, cfgApplyYAML)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				value := bc.second
				if value == "%d" {
					value = fmt.Sprint(i)
				}
				body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"` + value + `"}}`
				if w := ts.do("PATCH", cmPath+"/cfg?fieldManager=alice", mediaApplyPatch, body); w.Code != 200 {
					b.Fatalf("apply = %d %s", w.Code, w.Body)
				}
			}
		})
	}
}
