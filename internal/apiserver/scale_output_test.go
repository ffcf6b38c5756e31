package apiserver

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Scale is turned into what the Accept header asks for, as kube-apiserver
// 1.37.2 answered (curl beside start.sh): a built-in resource's Scale into
// a Table of upstream's Scale printer (Name without the name format), a
// custom resource's into the apiextensions server's scale columns; either
// into its metadata; a list's metadata is a 406; a custom resource's
// Scale is JSON to a client preferring protobuf.
func TestScaleInTheFormAsked(t *testing.T) {
	ts := newWidgetServer(t)
	ts.must(201, "POST", "/apis/apps/v1/namespaces/default/deployments", "", `{"metadata":{"name":"d"},"spec":{"replicas":4,
		"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`)
	get := func(path, accept string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		ts.s.ServeHTTP(w, r)
		return w
	}
	const table = "application/json;as=Table;v=v1;g=meta.k8s.io"
	for _, tc := range []struct {
		path, columns, nameFormat, ageType string
		desired                            float64
	}{
		{"/apis/apps/v1/namespaces/default/deployments/d/scale", "Name Desired Available Age", "", "string", 4},
		{widgetsPath + "/w1/scale", "Name Desired Available Age", "name", "date", 2},
	} {
		w := get(tc.path, table)
		var tab metav1.Table
		if err := json.Unmarshal(w.Body.Bytes(), &tab); err != nil || w.Code != 200 || tab.Kind != "Table" || len(tab.Rows) != 1 {
			t.Fatalf("%s as Table: %d %s", tc.path, w.Code, w.Body)
		}
		names := ""
		for i, c := range tab.ColumnDefinitions {
			if i > 0 {
				names += " "
			}
			names += c.Name
		}
		if names != tc.columns || tab.ColumnDefinitions[0].Format != tc.nameFormat || tab.ColumnDefinitions[3].Type != tc.ageType {
			t.Errorf("%s columns %+v", tc.path, tab.ColumnDefinitions)
		}
		if cells := tab.Rows[0].Cells; cells[1] != tc.desired || tab.ResourceVersion == "" {
			t.Errorf("%s row %v, resourceVersion %q", tc.path, cells, tab.ResourceVersion)
		}
		partial := ts.must(200, "GET", tc.path, "", "")
		w = get(tc.path, "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
		var p metav1.PartialObjectMetadata
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Kind != "PartialObjectMetadata" || p.Name != partial.Name || p.UID != partial.UID {
			t.Errorf("%s as PartialObjectMetadata: %s", tc.path, w.Body)
		}
		if w := get(tc.path, "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"); w.Code != 406 {
			t.Errorf("%s as PartialObjectMetadataList: %d, want 406", tc.path, w.Code)
		}
	}
	if w := get(widgetsPath+"/w1/scale", "application/vnd.kubernetes.protobuf,application/json"); w.Header().Get("Content-Type") != mediaJSON {
		t.Errorf("custom resource's Scale to a protobuf client: %s", w.Header().Get("Content-Type"))
	}
	if w := get("/apis/apps/v1/namespaces/default/deployments/d/scale", "application/vnd.kubernetes.protobuf,application/json"); w.Header().Get("Content-Type") != mediaProtobuf {
		t.Errorf("built-in Scale to a protobuf client: %s", w.Header().Get("Content-Type"))
	}
}
