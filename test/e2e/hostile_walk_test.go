package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// apiResource is one entry of a discovery resource list.
type apiResource struct {
	prefix   string // "/api/v1" or "/apis/<group>/<version>"
	group    string
	resource string // "pods"
	sub      string // "status", or "" for the resource itself
}

// discover walks discovery as mallory (system:discovery lets every
// authenticated user): /api, /apis and every group version's resource list.
// It returns the resources and the discovery paths it read.
func (hc *hostileClient) discover(t *testing.T) ([]apiResource, []string) {
	t.Helper()
	get := func(path string, into any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, hc.a.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+malloryToken)
		req.Header.Set("Accept", "application/json")
		code, body := do(t, hc.c, req)
		if code != http.StatusOK {
			t.Fatalf("mallory GET %s = %d %s, want 200", path, code, body)
		}
		if err := json.Unmarshal([]byte(body), into); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	var versions metav1.APIVersions
	get("/api", &versions)
	var groups metav1.APIGroupList
	get("/apis", &groups)
	gvPaths := []string{"/api", "/apis"}
	var lists []string // the resource lists: /api/v1, /apis/<group>/<version>
	for _, v := range versions.Versions {
		lists = append(lists, "/api/"+v)
	}
	for _, g := range groups.Groups {
		gvPaths = append(gvPaths, "/apis/"+g.Name)
		for _, v := range g.Versions {
			lists = append(lists, "/apis/"+v.GroupVersion)
		}
	}
	var resources []apiResource
	for _, p := range lists {
		var list metav1.APIResourceList
		get(p, &list)
		group := ""
		if g, _, ok := strings.Cut(list.GroupVersion, "/"); ok {
			group = g
		}
		for _, r := range list.APIResources {
			res, sub, _ := strings.Cut(r.Name, "/")
			resources = append(resources, apiResource{prefix: p, group: group, resource: res, sub: sub})
		}
	}
	if len(resources) < 50 {
		t.Fatalf("discovery lists %d resources, want the built-in ones", len(resources))
	}
	return resources, append(gvPaths, lists...)
}

// malloryMay reports whether RBAC lets mallory do verb on r in namespace ns
// ("" at the cluster scope): her Role, and system:basic-user's self reviews.
func malloryMay(r apiResource, ns, verb string) bool {
	if r.sub != "" {
		return false
	}
	if r.group == "" && r.resource == "configmaps" && ns == hostileNS {
		return slices.Contains([]string{"get", "list", "watch", "create", "update", "patch", "delete"}, verb)
	}
	if verb != "create" {
		return false
	}
	switch r.group {
	case "authorization.k8s.io":
		return r.resource == "selfsubjectaccessreviews" || r.resource == "selfsubjectrulesreviews"
	case "authentication.k8s.io":
		return r.resource == "selfsubjectreviews"
	}
	return false
}

// resourceVerb is upstream's RequestInfo verb for a method on a path with or
// without a name (a GET with a name is a get even with ?watch=true).
func resourceVerb(method string, named, watch bool) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case named:
			return "get"
		case watch:
			return "watch"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return "" // OPTIONS and the like: RBAC grants no verb ""
}

var writeMethods = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// walkProbes is every route of every resource with every method, in mine,
// in other and at the cluster scope, plus the non-resource paths, as
// mallory: what RBAC does not grant her is a 403.
func walkProbes(resources []apiResource, gvPaths []string) []probe {
	var probes []probe
	add := func(r apiResource, ns, method, path string, named, watch bool) {
		p := probe{method: method, path: path, want: code(http.StatusForbidden), watch: watch}
		if watch {
			p.path += "?watch=true&timeoutSeconds=1"
		}
		if malloryMay(r, ns, resourceVerb(method, named, watch)) {
			p.want = served
		}
		switch method {
		case http.MethodPost, http.MethodPut:
			p.contentType, p.body = "application/json", []byte("{}")
		case http.MethodPatch:
			p.contentType, p.body = "application/merge-patch+json", []byte("{}")
		}
		probes = append(probes, mallory(p))
	}
	const name = "hostile-walk-absent" // never exists: the walk changes nothing
	for _, r := range resources {
		type scope struct{ ns, base string }
		scopes := []scope{{"", r.prefix + "/" + r.resource}}
		for _, ns := range []string{hostileNS, hostileOther} {
			scopes = append(scopes, scope{ns, r.prefix + "/namespaces/" + ns + "/" + r.resource})
		}
		for _, s := range scopes {
			item := s.base + "/" + name
			if r.sub != "" {
				item += "/" + r.sub
				if r.sub == "proxy" {
					item += "/some/path"
				}
				for _, m := range append([]string{http.MethodGet}, writeMethods...) {
					add(r, s.ns, m, item, true, false)
				}
				continue
			}
			for _, m := range append([]string{http.MethodGet}, writeMethods...) {
				add(r, s.ns, m, s.base, false, false)
				add(r, s.ns, m, item, true, false)
			}
			add(r, s.ns, http.MethodGet, s.base, false, true)
			add(r, s.ns, http.MethodGet, item, true, true)
		}
	}
	cm := apiResource{prefix: "/api/v1", resource: "configmaps"}
	for _, ns := range []string{hostileNS, hostileOther} {
		base := "/api/v1/namespaces/" + ns + "/configmaps"
		add(cm, ns, http.MethodHead, base, false, false)
		add(cm, ns, http.MethodHead, base+"/baseline", true, false)
		add(cm, ns, http.MethodOptions, base, false, false)
		add(cm, ns, "BREW", base, false, false)
		// the deprecated /watch/ prefix
		p := probe{method: http.MethodGet, path: "/api/v1/watch/namespaces/" + ns + "/configmaps?timeoutSeconds=1", watch: true, want: code(http.StatusForbidden)}
		if ns == hostileNS {
			p.want = served
		}
		probes = append(probes, mallory(p))
	}
	// RBAC ignores the version: mine's configmaps in an unknown version are
	// authorized (and then not found); in an unknown group they are not.
	add(cm, hostileNS, http.MethodGet, "/api/v9/namespaces/"+hostileNS+"/configmaps", false, false)
	probes = append(probes, mallory(probe{method: http.MethodGet, path: "/apis/bogus.example.com/v1/namespaces/" + hostileNS + "/configmaps", want: code(http.StatusForbidden)}))
	return append(probes, nonResourceProbes(gvPaths)...)
}

// discoveryURLs are the non-resource URLs system:discovery and
// system:public-info-viewer grant every authenticated user (get only).
var discoveryURLs = []string{"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/readyz", "/version", "/version/", "/openapi", "/openapi/*"}

func discoveryGrants(path string) bool {
	path, _, _ = strings.Cut(path, "?")
	if isResourcePath(path) {
		return false
	}
	for _, u := range discoveryURLs {
		if prefix, ok := strings.CutSuffix(u, "*"); ok && strings.HasPrefix(path, prefix) || path == u {
			return true
		}
	}
	return false
}

// isResourcePath is upstream's RequestInfo split: /api/<version>/<resource>...
// and /apis/<group>/<version>/<resource>... are resource requests, whatever
// the segments are ("/api/../metrics" asks for resource metrics).
func isResourcePath(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		return true
	case len(parts) >= 4 && parts[0] == "apis":
		return true
	}
	return false
}

// notFoundPages are the granted paths kube-apiserver answers with its
// plain-text 404 page: no API group it serves holds them.
var notFoundPages = []string{"/apis/bogus.example.com", "/apis/bogus.example.com/v1", "/openapi"}

// emptyNotFounds are the granted paths kube-apiserver answers with a 404
// without a body: OpenAPI v3 documents it does not serve.
var emptyNotFounds = []string{"/openapi/v3/", "/openapi/v3/apis/bogus/v1"}

// nonResourceProbes: discovery, health, version, OpenAPI (granted: get),
// everything else (metrics, debug, OIDC discovery, admission traces, the
// dashboard, tricks with dots and slashes, random paths) refused.
func nonResourceProbes(gvPaths []string) []probe {
	paths := append(slices.Clone(gvPaths),
		"/api/", "/apis/", "/api/v9", "/apis/bogus.example.com", "/apis/bogus.example.com/v1",
		"/version", "/version/", "/healthz", "/livez", "/readyz", "/livez?verbose", "/readyz?verbose",
		"/openapi", "/openapi/v2", "/openapi/v3", "/openapi/v3/", "/openapi/v3/api/v1", "/openapi/v3/apis/apps/v1", "/openapi/v3/apis/bogus/v1",
		"/", "/foo", "/index.html", "/healthz/", "/healthz/ping", "/healthz/etcd", "/livez/ping", "/readyz/ping", "/readyz/informer-sync",
		"/metrics", "/metrics/slis", "/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=2",
		"/debug/pprof/profile?seconds=1", "/debug/flags/v", "/debug/api_priority_and_fairness/dump_priority_levels",
		"/.well-known/openid-configuration", "/openid/v1/jwks", "/openid/v1/jwks/",
		"/admission/traces", "/admission/traces/", "/admission/traces/abc", "/admission/traces?limit=1",
		"/dashboard", "/dashboard/", "/dashboard/api/", "/dashboard/api/traces/abc", "/dashboard/../metrics",
		"/logs", "/logs/", "/swaggerapi", "/swagger.json", "/ui/", "/proxy/", "/flowcontrol",
		"//metrics", "/api/../metrics", "/apis/../admission/traces", "/%2e%2e/metrics", "/metrics%00",
		"/%2Fdashboard", "/dashboard%2F..%2Fmetrics", "/"+strings.Repeat("a/", 2000),
	)
	var probes []probe
	for _, path := range paths {
		for _, m := range append([]string{http.MethodGet}, writeMethods...) {
			p := probe{method: m, path: path, want: code(http.StatusForbidden)}
			if m == http.MethodGet && discoveryGrants(path) {
				p.want = served
				// recorded from kube-apiserver 1.37.2
				p.notFoundPage = slices.Contains(notFoundPages, path)
				p.emptyNotFound = slices.Contains(emptyNotFounds, path)
			}
			if m != http.MethodGet && m != http.MethodDelete {
				p.contentType, p.body = "application/json", []byte("{}")
			}
			probes = append(probes, mallory(p))
		}
	}
	// non-resource verbs are the lowercase method: head and options are not
	// granted even where get is
	for _, path := range []string{"/api", "/version", "/healthz", "/openapi/v2"} {
		for _, m := range []string{http.MethodHead, http.MethodOptions} {
			probes = append(probes, mallory(probe{method: m, path: path, want: code(http.StatusForbidden)}))
		}
	}
	return probes
}

// garbageTokenProbes is every probe of the walk with a token no one issued,
// and a sample with other rejected bearer tokens: all 401. Credentials
// kube-apiserver does not read (Basic, an empty Bearer, Negotiate) make a
// request without credentials: a 401 too, but on the exact health paths,
// where admitd lets such requests in as system:anonymous (README's
// deliberate differences: upstream's anonymous path conditions).
func garbageTokenProbes(walk []probe) []probe {
	var probes []probe
	for _, p := range walk {
		p.auth, p.want = "Bearer "+garbageToken, code(http.StatusUnauthorized)
		probes = append(probes, p)
	}
	paths := []string{"/api", "/version", "/healthz", "/livez", "/readyz", "/healthz/ping", "/metrics", "/openid/v1/jwks", cmPath, "/bogus"}
	for _, auth := range []string{
		"Bearer " + malloryToken + "x",
		"Bearer " + strings.Repeat("g", 16<<10),
		"Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJtYWxsb3J5In0.",
	} {
		for _, path := range paths {
			probes = append(probes, probe{method: http.MethodGet, path: path, auth: auth, want: code(http.StatusUnauthorized)})
		}
	}
	for _, auth := range []string{"Basic bWFsbG9yeTptYWxsb3J5LXRva2Vu", "Bearer", "Negotiate abc"} {
		for _, path := range paths {
			p := probe{method: http.MethodGet, path: path, auth: auth, want: code(http.StatusUnauthorized)}
			if path == "/healthz" || path == "/livez" || path == "/readyz" {
				p.want = served
			}
			probes = append(probes, p)
		}
	}
	return probes
}
