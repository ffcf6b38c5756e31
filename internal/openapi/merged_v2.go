package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	kubeaggregator "k8s.io/kube-openapi/pkg/aggregator"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// mergedV2 is the /openapi/v2 document with extension servers' documents
// merged in, for one state of theirs (key) and one local document.
type mergedV2 struct {
	key      string
	local    *document
	json, pb *document
}

// ServeV2Merged answers /openapi/v2 with the remote documents merged after
// the local one, as kube-aggregator merges them (a path already there is
// kept; a definition or parameter of the same name and another schema is
// renamed). key names the remote documents' state: the merged document is
// built again only when it or the local one changes. Without remote
// documents it answers as ServeHTTP.
func (s *Service) ServeV2Merged(w http.ResponseWriter, r *http.Request, remote []*spec.Swagger, key string) {
	if len(remote) == 0 {
		s.serveV2(w, r)
		return
	}
	s.serveV2With(w, r, func(protobuf bool) (*document, error) { return s.mergedV2Document(remote, key, protobuf) })
}

// mergedV2Document returns the merged document, JSON or gnostic protobuf.
// Callers hold s.mu.
func (s *Service) mergedV2Document(remote []*spec.Swagger, key string, protobuf bool) (*document, error) {
	local, err := s.v2Document(false)
	if err != nil {
		return nil, err
	}
	m := s.merged
	if m == nil || m.key != key || m.local != local {
		var merged spec.Swagger
		if err := json.Unmarshal(local.body, &merged); err != nil {
			return nil, fmt.Errorf("reading the OpenAPI v2 document: %w", err)
		}
		for _, doc := range remote {
			if err := kubeaggregator.MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters(&merged, doc); err != nil {
				return nil, fmt.Errorf("merging an extension server's OpenAPI v2 document: %w", err)
			}
		}
		body, err := json.Marshal(&merged)
		if err != nil {
			return nil, fmt.Errorf("encoding the merged OpenAPI v2 document: %w", err)
		}
		m = &mergedV2{key: key, local: local, json: newDocument(body, nil)}
		s.merged = m
	}
	if !protobuf {
		return m.json, nil
	}
	if m.pb == nil {
		doc, err := openapi_v2.ParseDocument(m.json.body)
		if err != nil {
			return nil, fmt.Errorf("converting the merged OpenAPI v2 document to protobuf: %w", err)
		}
		body, err := proto.Marshal(doc)
		if err != nil {
			return nil, err
		}
		m.pb = newDocument(body, nil)
	}
	return m.pb, nil
}
