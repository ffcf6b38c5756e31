package controllers

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/admitd/admitd/pkg/admission"
)

// deleteSeer records the deletes admission sees.
type deleteSeer struct {
	mu    sync.Mutex
	calls []string
}

func (d *deleteSeer) Handles(op admission.Operation) bool { return op == admission.Delete }

func (d *deleteSeer) Validate(_ context.Context, a *admission.Attributes) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, a.Resource.Resource+" "+a.Namespace+"/"+a.Name+" by "+a.UserInfo.Username)
	return nil
}

func (d *deleteSeer) seen() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// A deleted namespace is emptied through the API (admission sees each
// delete, by the namespace controller), waits for the finalizers of what it
// holds, and is then removed.
func TestNamespaceFinalization(t *testing.T) {
	seer := &deleteSeer{}
	c := newCluster(t, admission.NamedPlugin{Name: "seer", Plugin: seer})
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"team"}}`)
	cms := "/api/v1/namespaces/team/configmaps"
	c.must(http.StatusCreated, "POST", cms, `{"metadata":{"name":"plain"}}`)
	c.must(http.StatusCreated, "POST", cms, `{"metadata":{"name":"held","finalizers":["example.com/hold"]}}`)

	c.must(http.StatusOK, "DELETE", "/api/v1/namespaces/team", "")
	c.eventually("the plain config map is deleted", c.gone(cms+"/plain"))
	byController := "configmaps team/plain by " + NamespacesUser.Username
	if !slices.Contains(seer.seen(), byController) {
		t.Errorf("admission saw deletes %q, want %q", seer.seen(), byController)
	}
	held := c.must(http.StatusOK, "GET", cms+"/held", "")
	if held.DeletionTimestamp == nil {
		t.Errorf("the config map with a finalizer has no deletionTimestamp")
	}
	if code, body := c.do("GET", "/api/v1/namespaces/team", ""); code != http.StatusOK || !strings.Contains(body, `"phase":"Terminating"`) {
		t.Fatalf("GET namespace = %d %s, want it Terminating while it holds an object", code, body)
	}

	c.must(http.StatusOK, "PATCH", cms+"/held", `{"metadata":{"finalizers":null}}`)
	c.eventually("the namespace is gone", c.gone("/api/v1/namespaces/team"))
}

// A namespace holding more objects than a page of emptyResource is emptied
// across pages, the objects with finalizers (on the first and a later
// page) kept until they are released.
func TestNamespaceFinalizationAcrossPages(t *testing.T) {
	defer func(p int64) { emptyPage = p }(emptyPage)
	emptyPage = 2
	c := newCluster(t)
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"big"}}`)
	cms := "/api/v1/namespaces/big/configmaps"
	plain := []string{"a", "c", "d", "f", "g"}
	for _, name := range plain {
		c.must(http.StatusCreated, "POST", cms, `{"metadata":{"name":"`+name+`"}}`)
	}
	for _, name := range []string{"b", "e"} {
		c.must(http.StatusCreated, "POST", cms, `{"metadata":{"name":"`+name+`","finalizers":["example.com/hold"]}}`)
	}

	c.must(http.StatusOK, "DELETE", "/api/v1/namespaces/big", "")
	for _, name := range plain {
		c.eventually("config map "+name+" is deleted", c.gone(cms+"/"+name))
	}
	for _, name := range []string{"b", "e"} {
		if held := c.must(http.StatusOK, "GET", cms+"/"+name, ""); held.DeletionTimestamp == nil {
			t.Errorf("config map %s, with a finalizer, has no deletionTimestamp", name)
		}
		c.must(http.StatusOK, "PATCH", cms+"/"+name, `{"metadata":{"finalizers":null}}`)
	}
	c.eventually("the namespace is gone", c.gone("/api/v1/namespaces/big"))
}
