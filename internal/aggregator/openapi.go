package aggregator

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// remoteOpenAPI keeps each remote APIService's server's OpenAPI v3 index,
// as kube-aggregator's OpenAPI v3 aggregator downloads it.
type remoteOpenAPI struct {
	mu      sync.Mutex
	entries map[string]openAPIEntry // by APIService name
}

type openAPIEntry struct {
	resourceVersion string
	fetched         time.Time
	// paths are the index's entries: path (apis/<group>/<version>) to
	// server-relative URL.
	paths  map[string]string
	failed bool
}

// OpenAPIV3Paths returns the paths of the OpenAPI v3 indexes of the
// available remote APIServices' servers with their server-relative URLs
// (the servers' own hashes), as upstream merges them into /openapi/v3;
// each index is fetched again when its APIService changes, after
// remoteRefresh, or after remoteRetry when the last fetch failed.
func (a *Aggregator) OpenAPIV3Paths(ctx context.Context) map[string]string {
	out := map[string]string{}
	for _, e := range a.openAPIIndexes(ctx) {
		for p, u := range e.paths {
			if _, ok := out[p]; !ok {
				out[p] = u
			}
		}
	}
	return out
}

// ServeOpenAPIV3 serves /openapi/v3/<path> from the server of the first
// available remote APIService (by name) whose index has path, proxied as
// user; false when none has it.
func (a *Aggregator) ServeOpenAPIV3(w http.ResponseWriter, r *http.Request, user authenticationv1.UserInfo, path string) bool {
	for _, s := range a.availableRemote(r.Context()) {
		e := a.openAPIIndex(r.Context(), s)
		if _, ok := e.paths[path]; ok {
			a.proxyTo(w, r, s, user, "", "")
			return true
		}
	}
	return false
}

// availableRemote are the available APIServices that name a service, by
// name.
func (a *Aggregator) availableRemote(ctx context.Context) []*apiregistrationv1.APIService {
	var out []*apiregistrationv1.APIService
	for _, s := range a.apiServices(ctx) {
		if s.Spec.Service != nil && isAvailable(s) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(x, y *apiregistrationv1.APIService) int { return strings.Compare(x.Name, y.Name) })
	return out
}

func (a *Aggregator) openAPIIndexes(ctx context.Context) []openAPIEntry {
	var out []openAPIEntry
	for _, s := range a.availableRemote(ctx) {
		out = append(out, a.openAPIIndex(ctx, s))
	}
	return out
}

// openAPIIndex returns s's server's index, fetching it when it is not
// current; a server that does not answer has none.
func (a *Aggregator) openAPIIndex(ctx context.Context, s *apiregistrationv1.APIService) openAPIEntry {
	o := &a.openAPI
	o.mu.Lock()
	e, ok := o.entries[s.Name]
	o.mu.Unlock()
	now := time.Now()
	if ok && current(e.resourceVersion, s.ResourceVersion, e.fetched, now, e.failed) {
		return e
	}
	e = openAPIEntry{resourceVersion: s.ResourceVersion, fetched: now, paths: map[string]string{}}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	body, _, err := a.discovery.get(ctx, s, "/openapi/v3", "application/json")
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err == nil {
		err = json.Unmarshal(body, &index)
	}
	for p, v := range index.Paths {
		e.paths[p] = v.ServerRelativeURL
	}
	if err != nil {
		e.failed = true
		a.o.Log.Debug("fetching the OpenAPI v3 index of an APIService", "apiservice", s.Name, "err", err)
	}
	o.mu.Lock()
	if o.entries == nil {
		o.entries = map[string]openAPIEntry{}
	}
	o.entries[s.Name] = e
	o.mu.Unlock()
	return e
}
