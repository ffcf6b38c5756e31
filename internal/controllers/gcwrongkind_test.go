package controllers

import (
	"net/http"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/pkg/storage"
)

// A reference that names a stored object's uid under another kind (of its
// group or another) names an owner that does not exist, as
// kube-controller-manager's collector finds it (by the reference's
// coordinates): its dependent is deleted. One that names it as it is
// stays. (A reference to a kind nobody serves is kept, as upstream keeps
// it while it cannot map the kind.)
func TestGarbageCollectorOwnerUnderOtherCoordinates(t *testing.T) {
	c := newCluster(t)
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"team"}}`)
	o := c.must(http.StatusCreated, "POST", "/api/v1/namespaces/team/configmaps", `{"metadata":{"name":"owner"}}`)
	ref := func(apiVersion, kind string) metav1.OwnerReference {
		r := ownerRef("owner", string(o.UID), false)
		r.APIVersion, r.Kind = apiVersion, kind
		return r
	}
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces/team/configmaps", ownedConfigMap("as-secret", ref("v1", "Secret")))
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces/team/configmaps", ownedConfigMap("as-deployment", ref("apps/v1", "Deployment")))
	c.must(http.StatusCreated, "POST", "/api/v1/namespaces/team/configmaps", ownedConfigMap("kept", ref("v1", "ConfigMap")))
	c.eventually("the dependent naming its owner as a Secret is deleted", c.gone("/api/v1/namespaces/team/configmaps/as-secret"))
	c.eventually("the dependent naming its owner as a Deployment is deleted", c.gone("/api/v1/namespaces/team/configmaps/as-deployment"))
	if code, out := c.do("GET", "/api/v1/namespaces/team/configmaps/kept", ""); code != http.StatusOK {
		t.Errorf("the dependent of a standing owner: GET = %d %s", code, out)
	}
}

// The graph queues a dependent whose reference names its owner's uid
// under another group or kind, not one at another version.
func TestGraphQueuesAReferenceUnderAnotherKind(t *testing.T) {
	dependent := func(apiVersion, kind string) storage.KeyValue {
		k := kv("dep", "d", false, nil)
		k.Value = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dep","namespace":"ns","uid":"d","ownerReferences":[{"apiVersion":"` +
			apiVersion + `","kind":"` + kind + `","name":"o","uid":"o"}]}}`)
		return k
	}
	for _, tc := range []struct {
		name, apiVersion, kind string
		want                   []work
	}{
		{"same group and kind", "v1", "ConfigMap", nil},
		{"another version", "v2", "ConfigMap", nil},
		{"another kind", "v1", "Secret", []work{{uid: "d"}}},
		{"another group", "apps/v1", "ConfigMap", []work{{uid: "d"}}},
	} {
		g := newGraph()
		g.kindOf = func(group, resource string) (string, bool) {
			return "ConfigMap", group == "" && resource == "configmaps"
		}
		g.apply(put(kv("o", types.UID("o"), false, nil)))
		if got := g.apply(put(dependent(tc.apiVersion, tc.kind))); !slices.Equal(got, tc.want) {
			t.Errorf("%s: work = %v, want %v", tc.name, got, tc.want)
		}
	}
}
