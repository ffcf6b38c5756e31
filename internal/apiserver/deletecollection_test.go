package apiserver

import (
	"encoding/json"
	"testing"
)

// A deletecollection answers the list as it was read before the
// deletions, its items without apiVersion and kind, as kube-apiserver
// 1.37.2 does (curl beside start.sh): a foreground or orphaning delete's
// finalizer and timestamp are not in it, though the objects now carry
// them.
func TestDeleteCollectionAnswersTheListAsRead(t *testing.T) {
	ts := newTestServer(t)
	for _, name := range []string{"a", "b"} {
		ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"`+name+`","labels":{"dc":"1"}}}`)
	}
	w := ts.do("DELETE", cmPath+"?labelSelector=dc%3D1", mediaJSON, `{"propagationPolicy":"Foreground"}`)
	var list struct {
		Kind  string
		Items []map[string]any
	}
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || w.Code != 200 || list.Kind != "ConfigMapList" || len(list.Items) != 2 {
		t.Fatalf("deletecollection answered %d %s", w.Code, w.Body)
	}
	for _, it := range list.Items {
		meta := it["metadata"].(map[string]any)
		if it["kind"] != nil || it["apiVersion"] != nil || meta["deletionTimestamp"] != nil || meta["finalizers"] != nil {
			t.Errorf("item %v is not as listed", it)
		}
	}
	after := ts.must(200, "GET", cmPath+"/a", "", "")
	if after.DeletionTimestamp == nil || len(after.Finalizers) != 1 || after.Finalizers[0] != "foregroundDeletion" {
		t.Errorf("a after the foreground delete: %v %v", after.DeletionTimestamp, after.Finalizers)
	}
}
