package controllers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A ConfigMap whose reference names, by uid, a ConfigMap of another
// namespace is deleted (no owner of its own namespace stands), and the
// collector reports the reference with upstream's Warning
// OwnerRefInvalidNamespace event in the dependent's namespace.
func TestGarbageCollectorOwnerInAnotherNamespace(t *testing.T) {
	c := newCluster(t)
	for _, ns := range []string{"team", "other"} {
		c.must(http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`)
	}
	o := c.must(http.StatusCreated, "POST", "/api/v1/namespaces/other/configmaps", `{"metadata":{"name":"elsewhere"}}`)
	dep := c.must(http.StatusCreated, "POST", "/api/v1/namespaces/team/configmaps", ownedConfigMap("cross", ownerRef("elsewhere", string(o.UID), false)))
	c.eventually("the dependent is deleted", c.gone("/api/v1/namespaces/team/configmaps/cross"))

	var got corev1.Event
	c.eventually("the collector's event", func() bool {
		_, out := c.do("GET", "/api/v1/namespaces/team/events", "")
		var list corev1.EventList
		if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Items) == 0 {
			return false
		}
		got = list.Items[0]
		return true
	})
	want := corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: "team", Name: "cross", UID: dep.UID}
	if got.InvolvedObject != want || got.Type != corev1.EventTypeWarning || got.Reason != "OwnerRefInvalidNamespace" || got.Source.Component != GarbageCollectorComponent {
		t.Errorf("event = %s %s on %+v from %q, want Warning OwnerRefInvalidNamespace on %+v from %q",
			got.Type, got.Reason, got.InvolvedObject, got.Source.Component, want, GarbageCollectorComponent)
	}
	wantMsg := `ownerRef [v1/ConfigMap, namespace: team, name: elsewhere, uid: ` + string(o.UID) + `] does not exist in namespace "team"`
	if got.Message != wantMsg || !strings.HasPrefix(got.ReportingController, GarbageCollectorComponent) {
		t.Errorf("event message %q reporting %q, want %q reporting %q", got.Message, got.ReportingController, wantMsg, GarbageCollectorComponent)
	}
}
