package openapi

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"github.com/munnerz/goautoneg"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/internal/registry"
)

// Catalogue is the source of the served resources; *registry.Catalogue
// implements it. Resources must return the same slice until the set
// changes (a new slice means "rebuild").
type Catalogue interface {
	Resources() []*registry.Resource
}

var _ Catalogue = (*registry.Catalogue)(nil)

// Options configure a Service.
type Options struct {
	// Version is every document's info.version; default "1.37", the
	// emulated Kubernetes version as kube-apiserver publishes it.
	Version string
	// ServiceAccountIssuerDiscovery publishes the documents of
	// /.well-known/openid-configuration and /openid/v1/jwks (set when the
	// server serves them); default false.
	ServiceAccountIssuerDiscovery bool
	// NotFound answers paths other than /openapi/v2, /openapi/v3 and
	// /openapi/v3/<document> (an unknown document gets an empty 404); default
	// http.NotFound.
	NotFound http.Handler
}

// Media types of the v2 document.
const (
	mediaJSON           = "application/json"
	mediaV2Protobuf     = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	subtypeV2Protobuf   = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
	subtypeV2ProtobufAt = "com.github.proto-openapi.spec.v2@v1.0+protobuf" // what kubectl asks for
)

// Service serves /openapi/v3 (index, per group-version documents and those
// of the discovery endpoints) and /openapi/v2 for a catalogue. Documents
// are built on first request and rebuilt only when the catalogue's
// resources change, per group-version (custom resources come and go;
// built-in ones are stable). It is safe for concurrent use.
type Service struct {
	cat  Catalogue
	opts Options

	mu       sync.Mutex
	b        *builder
	built    []*registry.Resource // the resources the documents describe
	docs     map[string]*document // by index path: api/v1, apis/apps/v1, apis/apps, version
	index    *document
	v2, v2pb *document                                // built on first request
	merged   *mergedV2                                // with extension servers' documents
	resolved map[schema.GroupVersionKind]*spec.Schema // by ResolveSchema
}

// document is one encoded document and its ETag.
type document struct {
	body      []byte
	etag      string               // upper-case hex SHA-512 of body, as upstream
	resources []*registry.Resource // described by a group-version's document; nil for discovery
}

func newDocument(body []byte, resources []*registry.Resource) *document {
	return &document{body: body, etag: fmt.Sprintf("%X", sha512.Sum512(body)), resources: resources}
}

// New returns the Service of a catalogue.
func New(cat Catalogue, opts Options) *Service {
	if opts.Version == "" {
		opts.Version = "1.37"
	}
	if opts.NotFound == nil {
		opts.NotFound = http.NotFoundHandler()
	}
	return &Service{cat: cat, opts: opts}
}

// ServeHTTP answers /openapi/v2, /openapi/v3 and /openapi/v3/<index path>.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path // exact, as upstream's mux: /openapi/v3/ is no document
	switch {
	case p == "/openapi/v2":
		s.serveV2(w, r)
	case p == "/openapi/v3":
		s.serveIndex(w, r)
	case strings.HasPrefix(p, "/openapi/v3/"):
		s.serveDocument(w, r, strings.TrimPrefix(p, "/openapi/v3/"))
	default:
		s.opts.NotFound.ServeHTTP(w, r)
	}
}

// refresh rebuilds the documents of the group-versions whose resources
// changed since the last build and adds those of discovery endpoints new
// to it (a group's first resource). Callers hold s.mu.
func (s *Service) refresh() error {
	rs := s.cat.Resources()
	if s.b != nil && sameSlice(rs, s.built) {
		return nil
	}
	if s.b == nil {
		s.b = newBuilder(s.opts.Version)
	}
	var order []string
	groups := map[string][]*registry.Resource{}
	for _, res := range rs {
		p := gvPath(res.GroupVersion())
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], res)
	}
	next := map[string]*document{}
	for _, p := range order {
		doc, ok := s.docs[p]
		if !ok || !slices.Equal(doc.resources, groups[p]) {
			body, err := json.Marshal(s.b.v3(groups[p]))
			if err != nil {
				return fmt.Errorf("encoding the OpenAPI v3 document of %s: %w", p, err)
			}
			doc = newDocument(body, groups[p])
		}
		next[p] = doc
	}
	for _, p := range discoveryPaths(rs, s.opts.ServiceAccountIssuerDiscovery) {
		doc, ok := s.docs[p]
		if !ok {
			body, err := json.Marshal(s.b.discoveryV3(p))
			if err != nil {
				return fmt.Errorf("encoding the OpenAPI v3 document of %s: %w", p, err)
			}
			doc = newDocument(body, nil)
		}
		next[p] = doc
	}
	index := map[string]map[string]string{}
	for p, doc := range next {
		index[p] = map[string]string{"serverRelativeURL": documentURL(p, doc)}
	}
	body, err := json.Marshal(map[string]any{"paths": index})
	if err != nil {
		return err
	}
	s.docs, s.index, s.built = next, newDocument(body, nil), rs
	s.v2, s.v2pb = nil, nil
	return nil
}

// IndexPaths returns the paths of the /openapi/v3 index (api/v1,
// apis/apps/v1, apis/apps, version, ...) with their server-relative URLs.
func (s *Service) IndexPaths() (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(s.docs))
	for p, doc := range s.docs {
		out[p] = documentURL(p, doc)
	}
	return out, nil
}

// documentURL is the server-relative URL of a document in the index: its
// path with its hash.
func documentURL(indexPath string, doc *document) string {
	u := url.URL{Path: "/openapi/v3/" + indexPath, RawQuery: url.Values{"hash": {doc.etag}}.Encode()}
	return u.String()
}

func sameSlice(a, b []*registry.Resource) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func (s *Service) serveIndex(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	err := s.refresh()
	doc := s.index
	s.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	serve(w, r, doc, mediaJSON)
}

// serveDocument answers /openapi/v3/<index path>; with ?hash= of the
// current document it may be cached for good, with another it redirects
// to the current one.
func (s *Service) serveDocument(w http.ResponseWriter, r *http.Request, indexPath string) {
	s.mu.Lock()
	err := s.refresh()
	doc := s.docs[indexPath]
	s.mu.Unlock()
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	case doc == nil: // as upstream's handler: a 404 without a body
		w.WriteHeader(http.StatusNotFound)
		return
	case negotiate(r, "json") == "":
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != doc.etag {
			http.Redirect(w, r, documentURL(indexPath, doc), http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).Format(time.RFC1123))
	}
	serve(w, r, doc, mediaJSON)
}

func (s *Service) serveV2(w http.ResponseWriter, r *http.Request) {
	s.serveV2With(w, r, s.v2Document)
}

// serveV2With answers /openapi/v2 with the document build gives, JSON or
// protobuf as negotiated; build runs under s.mu.
func (s *Service) serveV2With(w http.ResponseWriter, r *http.Request, build func(protobuf bool) (*document, error)) {
	subtype := negotiate(r, "json", subtypeV2Protobuf, subtypeV2ProtobufAt)
	if subtype == "" {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	s.mu.Lock()
	doc, err := build(subtype != "json")
	s.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if subtype == "json" {
		serve(w, r, doc, mediaJSON)
		return
	}
	serve(w, r, doc, mediaV2Protobuf)
}

// v2Document returns the v2 document, JSON or gnostic protobuf, building
// it if the catalogue changed. Callers hold s.mu.
func (s *Service) v2Document(protobuf bool) (*document, error) {
	if err := s.refresh(); err != nil {
		return nil, err
	}
	if s.v2 == nil {
		sw, err := s.b.v2(s.built, discoveryPaths(s.built, s.opts.ServiceAccountIssuerDiscovery))
		if err != nil {
			return nil, fmt.Errorf("building the OpenAPI v2 document: %w", err)
		}
		body, err := json.Marshal(sw)
		if err != nil {
			return nil, fmt.Errorf("encoding the OpenAPI v2 document: %w", err)
		}
		s.v2 = newDocument(body, nil)
	}
	if !protobuf {
		return s.v2, nil
	}
	if s.v2pb == nil {
		doc, err := openapi_v2.ParseDocument(s.v2.body)
		if err != nil {
			return nil, fmt.Errorf("converting the OpenAPI v2 document to protobuf: %w", err)
		}
		body, err := proto.Marshal(doc)
		if err != nil {
			return nil, err
		}
		s.v2pb = newDocument(body, nil)
	}
	return s.v2pb, nil
}

// negotiate returns the first of the application/<subtype> types the
// request accepts, in the client's order of preference; "" for none.
func negotiate(r *http.Request, subtypes ...string) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	for _, c := range goautoneg.ParseAccept(accept) {
		if c.Type != "application" && c.Type != "*" {
			continue
		}
		for _, st := range subtypes {
			if c.SubType == st || c.SubType == "*" {
				return st
			}
		}
	}
	return ""
}

// serve writes a document with its ETag; http.ServeContent answers a
// matching If-None-Match with 304.
func serve(w http.ResponseWriter, r *http.Request, doc *document, contentType string) {
	w.Header().Add("Vary", "Accept")
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Etag", strconv.Quote(doc.etag))
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(doc.body))
}
