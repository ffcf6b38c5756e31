package apiserver

import (
	"encoding/json"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A list at resourceVersion "0" is served whole whatever its limit, as
// kube-apiserver's watch cache serves it (computeListLimit); any other
// list with a limit is a page with a continue token and the remaining
// count.
func TestListLimitAtResourceVersionZero(t *testing.T) {
	ts := newTestServer(t)
	for _, name := range []string{"c1", "c2", "c3"} {
		ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"`+name+`"}}`)
	}
	for query, want := range map[string]string{
		"?limit=1&resourceVersion=0":                                   "3 items, continue false, remaining <nil>",
		"?limit=1&resourceVersion=0&resourceVersionMatch=NotOlderThan": "3 items, continue false, remaining <nil>",
		"?limit=1&resourceVersion=0&labelSelector=!nothing":            "3 items, continue false, remaining <nil>",
		"?limit=1": "1 items, continue true, remaining 2",
		"?limit=1&resourceVersionMatch=NotOlderThan&resourceVersion=1": "1 items, continue true, remaining 2",
	} {
		w := ts.do("GET", cmPath+query, "", "")
		var list struct {
			Metadata metav1.ListMeta  `json:"metadata"`
			Items    []map[string]any `json:"items"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || w.Code != 200 {
			t.Fatalf("GET %s = %d %s", query, w.Code, w.Body)
		}
		remaining := "<nil>"
		if r := list.Metadata.RemainingItemCount; r != nil {
			remaining = fmt.Sprint(*r)
		}
		got := fmt.Sprintf("%d items, continue %v, remaining %s", len(list.Items), list.Metadata.Continue != "", remaining)
		if got != want {
			t.Errorf("GET %s: %s, want %s", query, got, want)
		}
	}
}
