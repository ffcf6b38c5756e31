package apiserver

import (
	"net/http"
	"sync"

	"github.com/admitd/admitd/internal/openapi"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/serviceaccount"
)

// OpenAPI v2 and v3 documents are built and served by internal/openapi
// from the catalogue; this file adapts it: 404s are Status errors,
// info.version is the Kubernetes version admitd emulates and the OpenAPI
// documents of the service-account issuer's endpoints are published when
// the server serves them.

// openAPIServices holds one service per catalogue and issuer discovery
// setting (servers sharing both share the documents). It lives here rather
// than in Server so that this adapter stays one file.
var openAPIServices sync.Map // openAPIKey -> *openapi.Service

type openAPIKey struct {
	cat          *registry.Catalogue
	openIDServed bool
}

// OpenAPI is the service of the server's OpenAPI documents; it also resolves the
// schemas of built-in kinds (policy type checking).
func (s *Server) OpenAPI() *openapi.Service {
	_, openID := s.cfg.Extra[serviceaccount.OpenIDConfigPath]
	return openAPIService(openAPIKey{cat: s.cat, openIDServed: openID})
}

// openAPIService returns the service of a catalogue and setting, creating
// it on first use.
func openAPIService(key openAPIKey) *openapi.Service {
	if svc, ok := openAPIServices.Load(key); ok {
		return svc.(*openapi.Service)
	}
	svc, _ := openAPIServices.LoadOrStore(key, openapi.New(key.cat, openapi.Options{
		Version:                       kubeMajor + "." + kubeMinor, // as upstream: the emulated version, 1.37
		ServiceAccountIssuerDiscovery: key.openIDServed,
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
