package controllers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/internal/apiserver"
)

// conditionLines is each condition of the namespace at path as
// "type status reason message".
func (c *cluster) conditionLines(path string) []string {
	c.t.Helper()
	_, out := c.do("GET", path, "")
	var ns corev1.Namespace
	if err := json.Unmarshal([]byte(out), &ns); err != nil {
		c.t.Fatalf("GET %s: %v: %s", path, err, out)
	}
	var lines []string
	for _, cond := range ns.Status.Conditions {
		lines = append(lines, fmt.Sprintf("%s %s %s %s", cond.Type, cond.Status, cond.Reason, cond.Message))
	}
	return lines
}

// A Terminating namespace shows kube-controller-manager's five conditions
// while an object held by a finalizer stays (as recorded from kcm 1.37.2
// in test/e2e/workloads/testdata/nsdelete).
func TestNamespaceConditionsWhileContentRemains(t *testing.T) {
	c := newCluster(t)
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"team"}}`)
	cms := "/api/v1/namespaces/team/configmaps"
	c.must(http.StatusCreated, "POST", cms, `{"metadata":{"name":"plain"}}`)
	c.must(http.StatusCreated, "POST", cms, `{"metadata":{"name":"held","finalizers":["example.com/hold"]}}`)
	c.must(http.StatusOK, "DELETE", "/api/v1/namespaces/team", "")

	want := []string{
		"NamespaceDeletionDiscoveryFailure False ResourcesDiscovered All resources successfully discovered",
		"NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions All legacy kube types successfully parsed",
		"NamespaceDeletionContentFailure False ContentDeleted All content successfully deleted, may be waiting on finalization",
		"NamespaceContentRemaining True SomeResourcesRemain Some resources are remaining: configmaps. has 1 resource instances",
		"NamespaceFinalizersRemaining True SomeFinalizersRemain Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
	}
	var got []string
	c.eventually("the namespace's conditions", func() bool {
		got = c.conditionLines("/api/v1/namespaces/team")
		return slices.Equal(got, want)
	})
	c.must(http.StatusOK, "PATCH", cms+"/held", `{"metadata":{"finalizers":null}}`)
	c.eventually("the namespace is gone", c.gone("/api/v1/namespaces/team"))
}

// With graceful pod deletion (admitd's simulated nodes), a pod bound to a
// node is deleted gracefully and stays until its kubelet (here the test)
// ends it: the namespace waits for it, and its other content is not
// deleted before the pods are gone. Its conditions meanwhile are all
// False, as kube-controller-manager 1.37.2 writes them for a namespace
// whose pods are still terminating (checked on it: its pass stops at the
// pods before it counts what is left).
func TestNamespaceWaitsForGracefullyDeletedPods(t *testing.T) {
	c := newClusterWith(t, func(cfg *apiserver.Config) { cfg.GracefulPodDeletion = true })
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"team"}}`)
	pod := "/api/v1/namespaces/team/pods/web"
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces/team/pods",
		`{"metadata":{"name":"web"},"spec":{"nodeName":"node-1","terminationGracePeriodSeconds":30,"containers":[{"name":"c","image":"nginx"}]}}`)
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces/team/configmaps", `{"metadata":{"name":"plain"}}`)
	c.must(http.StatusOK, "DELETE", "/api/v1/namespaces/team", "")

	want := []string{
		"NamespaceDeletionDiscoveryFailure False ResourcesDiscovered All resources successfully discovered",
		"NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions All legacy kube types successfully parsed",
		"NamespaceDeletionContentFailure False ContentDeleted All content successfully deleted, may be waiting on finalization",
		"NamespaceContentRemaining False ContentRemoved All content successfully removed",
		"NamespaceFinalizersRemaining False ContentHasNoFinalizers All content-preserving finalizers finished",
	}
	c.eventually("the namespace's conditions", func() bool { return slices.Equal(c.conditionLines("/api/v1/namespaces/team"), want) })
	time.Sleep(1500 * time.Millisecond) // another pass
	if p := c.must(http.StatusOK, "GET", pod, ""); p.DeletionTimestamp == nil {
		t.Errorf("the pod is not being deleted")
	}
	if code, _ := c.do("GET", "/api/v1/namespaces/team/configmaps/plain", ""); code != http.StatusOK {
		t.Errorf("GET the config map while a pod remains = %d, want 200 (pods go first)", code)
	}
	c.must(http.StatusOK, "DELETE", pod, `{"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0}`)
	c.eventually("the namespace is gone", c.gone("/api/v1/namespaces/team"))
}
