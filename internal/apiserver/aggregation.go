package apiserver

import (
	"context"
	"net/http"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Aggregator is the aggregation layer (internal/aggregator): APIServices
// whose group/version another server serves, and the order APIServices
// give discovery.
type Aggregator interface {
	// ServeProxy serves a request under /apis/<group>/<version> for user
	// when an APIService sends that group/version to another server, and
	// reports whether it did.
	ServeProxy(w http.ResponseWriter, r *http.Request, user authenticationv1.UserInfo, group, version string) bool
	// APIGroupList is legacy discovery's list of groups (/apis).
	APIGroupList(ctx context.Context) []metav1.APIGroup
	// APIGroup is /apis/<group> from the group's APIServices, nil when it
	// has none.
	APIGroup(ctx context.Context, group string) *metav1.APIGroup
	// MergeDiscovery adds the remote group/versions to the aggregated
	// discovery of /apis and orders its groups.
	MergeDiscovery(ctx context.Context, list *apidiscoveryv2.APIGroupDiscoveryList)
}

// serveAggregated proxies a request under /apis/<group>/<version> that an
// APIService sends elsewhere; false when it is served here.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request, rq *request) bool {
	info := rq.info
	if s.cfg.Aggregator == nil || info.APIPrefix != "apis" || info.Group == "" || info.Version == "" {
		return false
	}
	return s.cfg.Aggregator.ServeProxy(w, r, rq.user, info.Group, info.Version)
}
