package apiserver

import (
	"net/http"
	"strings"
	"sync"

	"github.com/admitd/admitd/internal/openapi"
	"github.com/admitd/admitd/internal/registry"
)

// OpenAPI v2 and v3 documents are built and served by internal/openapi
// from the catalogue; this file adapts it: 404s are Status errors and
// info.version is the Kubernetes version admitd serves.

// openAPIServices holds one service per catalogue (servers sharing a
// catalogue share the documents). It lives here rather than in Server so
// that this adapter stays one file.
var openAPIServices sync.Map // *registry.Catalogue -> *openapi.Service

// OpenAPI is the service of the server's OpenAPI documents; it also resolves the
// schemas of built-in kinds (policy type checking).
func (s *Server) OpenAPI() *openapi.Service {
	return openAPIService(s.cat)
}

// openAPIService returns the service of a catalogue, creating it on first
// use.
func openAPIService(cat *registry.Catalogue) *openapi.Service {
	if svc, ok := openAPIServices.Load(cat); ok {
		return svc.(*openapi.Service)
	}
	svc, _ := openAPIServices.LoadOrStore(cat, openapi.New(cat, openapi.Options{
		Version: strings.Split(versionInfo().GitVersion, "-")[0], // as upstream: v1.37.2
		NotFound: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, r, errNotFoundPath())
		}),
	}))
	return svc.(*openapi.Service)
}

// serveOpenAPIV3 answers /openapi/v3 (the index) and /openapi/v3/<gv>,
// merged with the remote APIServices' documents.
func (s *Server) serveOpenAPIV3(w http.ResponseWriter, r *http.Request) {
	if s.serveAggregatedOpenAPIV3(w, r) {
		return
	}
	s.OpenAPI().ServeHTTP(w, r)
}

// serveOpenAPIV2 answers /openapi/v2 (gnostic protobuf or JSON), merged
// with the remote APIServices' documents.
func (s *Server) serveOpenAPIV2(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Aggregator == nil {
		s.OpenAPI().ServeHTTP(w, r)
		return
	}
	remote, key := s.cfg.Aggregator.OpenAPIV2Specs(r.Context())
	s.OpenAPI().ServeV2Merged(w, r, remote, key)
}
