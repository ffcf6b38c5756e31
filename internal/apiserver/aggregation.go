package apiserver

import (
	"context"
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Aggregator is the aggregation layer (internal/aggregator): APIServices
// whose group/version another server serves, and the order APIServices
// give discovery.
type Aggregator interface {
	// ServeProxy serves a request under /apis/<group>/<version> for user
	// when an APIService sends that group/version to another server, and
	// reports whether it did; refused is the code of an answer it gave
	// itself instead of the other server's (the APIService unavailable,
	// its transport or Service unusable), 0 when it proxied.
	ServeProxy(w http.ResponseWriter, r *http.Request, user authenticationv1.UserInfo, group, version string) (served bool, refused int)
	// APIGroupList is legacy discovery's list of groups (/apis).
	APIGroupList(ctx context.Context) []metav1.APIGroup
	// APIGroup is /apis/<group> from the group's APIServices, nil when it
	// has none.
	APIGroup(ctx context.Context, group string) *metav1.APIGroup
	// MergeDiscovery adds the remote group/versions to the aggregated
	// discovery of /apis and orders its groups.
	MergeDiscovery(ctx context.Context, list *apidiscoveryv2.APIGroupDiscoveryList)
	// OpenAPIV3Paths are the remote servers' OpenAPI v3 index entries
	// (path to server-relative URL).
	OpenAPIV3Paths(ctx context.Context) map[string]string
	// ServeOpenAPIV3 serves /openapi/v3/<path> from the remote server
	// whose index has path, as user; false when none has it.
	ServeOpenAPIV3(w http.ResponseWriter, r *http.Request, user authenticationv1.UserInfo, path string) bool
	// OpenAPIV2Specs are the remote servers' /openapi/v2 documents, each
	// filtered to its group/version, in merge order, and a key that
	// changes when one does.
	OpenAPIV2Specs(ctx context.Context) ([]*spec.Swagger, string)
}

// serveAggregated proxies a request under /apis/<group>/<version> that an
// APIService sends elsewhere; false when it is served here.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request, rq *request) bool {
	info := rq.info
	if s.cfg.Aggregator == nil || info.APIPrefix != "apis" || info.Group == "" || info.Version == "" {
		return false
	}
	served, refused := s.cfg.Aggregator.ServeProxy(w, r, rq.user, info.Group, info.Version)
	if m := s.cfg.RequestMetrics; m != nil && refused != 0 {
		m.terminateBy(r, info, aggregatorComponent, refused)
	}
	return served
}

// aggregatorComponent is the component label of the terminations of the
// aggregation layer's proxy, as kube-aggregator's.
const aggregatorComponent = "aggregator"

// serveAggregatedOpenAPIV3 answers /openapi/v3 with the remote servers'
// paths added to this server's (this server's first, as upstream's merged
// index) and /openapi/v3/<path> of a path only a remote server has from
// it; false leaves the request to this server's documents.
func (s *Server) serveAggregatedOpenAPIV3(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Aggregator == nil {
		return false
	}
	local, err := s.OpenAPI().IndexPaths()
	if err != nil {
		return false
	}
	p := r.URL.Path
	if p != "/openapi/v3" {
		path := strings.TrimPrefix(p, "/openapi/v3/")
		if _, ok := local[path]; ok {
			return false
		}
		rq := requestFrom(r.Context())
		return rq != nil && s.cfg.Aggregator.ServeOpenAPIV3(w, r, rq.user, path)
	}
	remote := s.cfg.Aggregator.OpenAPIV3Paths(r.Context())
	if len(remote) == 0 {
		return false
	}
	paths := map[string]map[string]string{}
	for k, u := range remote {
		paths[k] = map[string]string{"serverRelativeURL": u}
	}
	for k, u := range local {
		paths[k] = map[string]string{"serverRelativeURL": u}
	}
	writeJSON(w, http.StatusOK, map[string]any{"paths": paths})
	return true
}
