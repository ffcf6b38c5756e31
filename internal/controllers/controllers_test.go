package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// cluster is an in-process API server over memory storage with the
// controllers running, driven through ServeHTTP.
type cluster struct {
	t      *testing.T
	api    *apiserver.Server
	status *PolicyStatus // not running: tests call Sync
	store  storage.Store
	cat    *registry.Catalogue
}

func newCluster(t *testing.T, plugins ...admission.NamedPlugin) *cluster {
	t.Helper()
	return newClusterWith(t, func(*apiserver.Config) {}, plugins...)
}

// newClusterWith is newCluster with its API server's configuration
// changed by configure.
func newClusterWith(t *testing.T, configure func(*apiserver.Config), plugins ...admission.NamedPlugin) *cluster {
	t.Helper()
	store, cat := memory.New(), registry.NewCatalogue()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	c := &cluster{t: t, store: store, cat: cat}
	inject := NewCAInjection(admissionsource.NewSecretLookup(store, cat), log)
	refresh := NewCARefresh(store, cat, c.client(CAInjectorUser), inject, log)
	cfg := apiserver.Config{Store: store, Catalogue: cat, Admission: admission.NewChain(plugins...),
		WriteSteps: []admission.NamedPlugin{{Name: CAInjectionName, Plugin: inject}},
		Observers:  []apiserver.WriteObserver{apiserver.CustomResourceSync(store, cat, log), caObserver{refresh}}}
	configure(&cfg)
	c.api = apiserver.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := c.api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	gcEvents, err := NewEventRecorder(ctx, c.api.Loopback(GarbageCollectorUser), GarbageCollectorComponent, log)
	if err != nil {
		t.Fatal(err)
	}
	go NewGarbageCollector(store, cat, c.client(GarbageCollectorUser), gcEvents, log).Run(ctx)
	go NewServiceAccounts(store, c.client(ServiceAccountsUser), log).Run(ctx)
	go NewNamespaces(store, cat, c.client(NamespacesUser), log).Run(ctx)
	c.status = NewPolicyStatus(store, cat, c.client(PolicyStatusUser), c.api.OpenAPI(), log)
	return c
}

// client is a loopback client of the cluster's API server as user, usable
// before the server exists.
func (c *cluster) client(user authenticationv1.UserInfo) dynamic.Interface {
	c.t.Helper()
	client, err := NewClient(roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		return c.api.Loopback(user).RoundTrip(r)
	}))
	if err != nil {
		c.t.Fatal(err)
	}
	return client
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// caObserver calls the CA refresh as internal/server's observers do.
type caObserver struct{ r *CARefresh }

func (o caObserver) Handles(gvr schema.GroupVersionResource) bool {
	return gvr.GroupResource() == corev1.Resource("secrets") || IsWebhookConfiguration(gvr.GroupResource())
}

func (o caObserver) Written(ctx context.Context, ev apiserver.WriteEvent) {
	switch {
	case ev.Resource.Resource == "secrets":
		o.r.SecretWritten(ctx, ev.Object.(metav1.Object))
	case !ev.Deleted:
		o.r.ConfigurationWritten(ctx, ev.Resource, ev.Object)
	}
}

func (c *cluster) do(method, path, body string) (int, string) {
	c.t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if method == "PATCH" {
		r.Header.Set("Content-Type", "application/merge-patch+json")
	}
	w := httptest.NewRecorder()
	c.api.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

func (c *cluster) must(code int, method, path, body string) metav1.PartialObjectMetadata {
	c.t.Helper()
	got, out := c.do(method, path, body)
	if got != code {
		c.t.Fatalf("%s %s = %d %s, want %d", method, path, got, out, code)
	}
	var m metav1.PartialObjectMetadata
	_ = json.Unmarshal([]byte(out), &m)
	return m
}

// eventually waits until cond holds, failing the test after a few seconds.
func (c *cluster) eventually(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (c *cluster) gone(path string) func() bool {
	return func() bool { code, _ := c.do("GET", path, ""); return code == http.StatusNotFound }
}

func TestDefaultServiceAccounts(t *testing.T) {
	c := newCluster(t)
	for _, ns := range []string{"default", "kube-system"} {
		c.eventually("namespace "+ns+" has its default service account", func() bool {
			code, _ := c.do("GET", "/api/v1/namespaces/"+ns+"/serviceaccounts/default", "")
			return code == 200
		})
	}
	c.must(201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"team-a"}}`)
	sa := "/api/v1/namespaces/team-a/serviceaccounts/default"
	c.eventually("a new namespace has a default service account", func() bool { code, _ := c.do("GET", sa, ""); return code == 200 })
	first := c.must(200, "GET", sa, "")
	c.must(200, "DELETE", sa, "")
	c.eventually("a deleted default service account is recreated", func() bool {
		code, out := c.do("GET", sa, "")
		return code == 200 && !strings.Contains(out, string(first.UID))
	})
}

const nsPath = "/api/v1/namespaces/default/configmaps"

// ownedConfigMap returns a ConfigMap owned by the given owners.
func ownedConfigMap(name string, owners ...metav1.OwnerReference) string {
	refs, _ := json.Marshal(owners)
	return fmt.Sprintf(`{"metadata":{"name":%q,"ownerReferences":%s}}`, name, refs)
}

func ownerRef(name string, uid string, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: typesUID(uid), BlockOwnerDeletion: &block}
}

func deleteWith(policy string) string {
	return `{"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"` + policy + `"}`
}

func TestGarbageCollectionPolicies(t *testing.T) {
	c := newCluster(t)
	for _, tc := range []struct {
		policy       string
		block        bool
		keepsDep     bool
		ownerWaits   bool
		ownerCode    int
		ownerFinal   string
		depRefsAfter int
	}{
		{policy: "Background", ownerCode: 200},
		{policy: "Foreground", block: true, ownerWaits: true, ownerCode: 200, ownerFinal: metav1.FinalizerDeleteDependents},
		{policy: "Orphan", keepsDep: true, ownerWaits: true, ownerCode: 200, ownerFinal: metav1.FinalizerOrphanDependents},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			c.t = t
			owner := "owner-" + strings.ToLower(tc.policy)
			dep := "dep-" + strings.ToLower(tc.policy)
			o := c.must(201, "POST", nsPath, `{"metadata":{"name":"`+owner+`"}}`)
			c.must(201, "POST", nsPath, ownedConfigMap(dep, ownerRef(owner, string(o.UID), tc.block)))
			code, out := c.do("DELETE", nsPath+"/"+owner, deleteWith(tc.policy))
			if code != tc.ownerCode || (tc.ownerFinal != "" && !strings.Contains(out, tc.ownerFinal)) {
				t.Fatalf("DELETE owner = %d %s, want %d with finalizer %q", code, out, tc.ownerCode, tc.ownerFinal)
			}
			c.eventually("the owner is gone", c.gone(nsPath+"/"+owner))
			if !tc.keepsDep {
				c.eventually("the dependent is gone", c.gone(nsPath+"/"+dep))
				return
			}
			d := c.must(200, "GET", nsPath+"/"+dep, "")
			if len(d.OwnerReferences) != 0 {
				t.Errorf("orphaned dependent still has owner references %v", d.OwnerReferences)
			}
		})
	}
}

func TestForegroundWaitsForBlockingDependents(t *testing.T) {
	c := newCluster(t)
	o := c.must(201, "POST", nsPath, `{"metadata":{"name":"owner"}}`)
	// A finalizer keeps the dependent (and so the owner) around.
	c.must(201, "POST", nsPath, `{"metadata":{"name":"dep","finalizers":["example.com/hold"],"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"`+string(o.UID)+`","blockOwnerDeletion":true}]}}`)
	c.must(200, "DELETE", nsPath+"/owner", deleteWith("Foreground"))
	c.eventually("the dependent is being deleted", func() bool {
		_, out := c.do("GET", nsPath+"/dep", "")
		return strings.Contains(out, "deletionTimestamp")
	})
	time.Sleep(100 * time.Millisecond)
	if code, _ := c.do("GET", nsPath+"/owner", ""); code != 200 {
		t.Fatalf("the owner went before its blocking dependent (GET = %d)", code)
	}
	c.must(200, "PATCH", nsPath+"/dep", `{"metadata":{"finalizers":null}}`)
	c.eventually("the dependent is gone", c.gone(nsPath+"/dep"))
	c.eventually("then the owner is gone", c.gone(nsPath+"/owner"))
}

func TestGarbageCollectionOwnersAndDefaults(t *testing.T) {
	c := newCluster(t)
	// A dependent of an owner that never existed is garbage.
	c.must(201, "POST", nsPath, ownedConfigMap("stray", ownerRef("ghost", "00000000-0000-0000-0000-000000000000", false)))
	c.eventually("a dependent of a missing owner is deleted", c.gone(nsPath+"/stray"))

	// A dependent with a standing owner stays, without the gone one.
	a := c.must(201, "POST", nsPath, `{"metadata":{"name":"a"}}`)
	b := c.must(201, "POST", nsPath, `{"metadata":{"name":"b"}}`)
	c.must(201, "POST", nsPath, ownedConfigMap("shared", ownerRef("a", string(a.UID), false), ownerRef("b", string(b.UID), false)))
	c.must(200, "DELETE", nsPath+"/a", "")
	c.eventually("the reference to the deleted owner is removed", func() bool {
		_, out := c.do("GET", nsPath+"/shared", "")
		return strings.Contains(out, `"b"`) && !strings.Contains(out, string(a.UID))
	})

	// ReplicationControllers orphan by default in v1.
	rc := c.must(201, "POST", "/api/v1/namespaces/default/replicationcontrollers",
		`{"metadata":{"name":"rc"},"spec":{"replicas":0,"selector":{"app":"x"},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`)
	c.must(201, "POST", nsPath, fmt.Sprintf(`{"metadata":{"name":"rc-dep","ownerReferences":[{"apiVersion":"v1","kind":"ReplicationController","name":"rc","uid":%q}]}}`, rc.UID))
	c.must(200, "DELETE", "/api/v1/namespaces/default/replicationcontrollers/rc", "")
	c.eventually("the replication controller is gone", c.gone("/api/v1/namespaces/default/replicationcontrollers/rc"))
	if d := c.must(200, "GET", nsPath+"/rc-dep", ""); len(d.OwnerReferences) != 0 {
		t.Errorf("dependent of an orphaning delete keeps %v", d.OwnerReferences)
	}
}

func typesUID(s string) types.UID { return types.UID(s) }
