package apiserver

import (
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// OpenAPI v3: an index of group-versions and, per group-version, a document
// whose paths declare, for every kind, a patch operation that accepts the
// fieldValidation parameter. That is what kubectl checks before create -f
// and apply -f to rely on server-side field validation.

func (s *Server) serveOpenAPIV3(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(strings.TrimSuffix(r.URL.Path, "/"), "/openapi/v3")
	if p == "" {
		s.serveOpenAPIIndex(w, r)
		return
	}
	gvPath := strings.TrimPrefix(p, "/")
	gv, ok := parseGVPath(gvPath)
	if !ok {
		writeError(w, r, errNotFoundPath())
		return
	}
	doc := s.openAPIDocument(gv)
	if doc == nil {
		writeError(w, r, errNotFoundPath())
		return
	}
	body, _ := json.Marshal(doc)
	etag := `"` + hashOf(body) + `"`
	w.Header().Set("Etag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", mediaJSON)
	_, _ = w.Write(body)
}

func (s *Server) serveOpenAPIIndex(w http.ResponseWriter, r *http.Request) {
	paths := map[string]any{}
	for _, g := range s.cat.Groups() {
		for _, v := range s.cat.Versions(g) {
			gv := schema.GroupVersion{Group: g, Version: v}
			body, _ := json.Marshal(s.openAPIDocument(gv))
			p := gvPathOf(gv)
			paths[p] = map[string]string{"serverRelativeURL": "/openapi/v3/" + p + "?hash=" + hashOf(body)}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"paths": paths})
}

func hashOf(b []byte) string {
	sum := sha512.Sum512(b)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

func gvPathOf(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

func parseGVPath(p string) (schema.GroupVersion, bool) {
	parts := strings.Split(p, "/")
	switch {
	case len(parts) == 2 && parts[0] == "api":
		return schema.GroupVersion{Version: parts[1]}, true
	case len(parts) == 3 && parts[0] == "apis":
		return schema.GroupVersion{Group: parts[1], Version: parts[2]}, true
	}
	return schema.GroupVersion{}, false
}

// openAPIDocument returns the v3 document of one group-version, or nil.
func (s *Server) openAPIDocument(gv schema.GroupVersion) map[string]any {
	paths := map[string]any{}
	for _, res := range s.cat.Resources() {
		if res.GroupVersion() != gv {
			continue
		}
		p := "/" + gvPathOf(gv)
		if res.Namespaced {
			p += "/namespaces/{namespace}"
		}
		p += "/" + res.Resource + "/{name}"
		gvk := res.GroupVersionKind()
		paths[p] = map[string]any{"patch": map[string]any{
			"x-kubernetes-group-version-kind": map[string]string{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind},
			"x-kubernetes-action":             "patch",
			"parameters": []any{
				map[string]any{"name": "fieldValidation", "in": "query", "schema": map[string]string{"type": "string"}},
				map[string]any{"name": "fieldManager", "in": "query", "schema": map[string]string{"type": "string"}},
				map[string]any{"name": "dryRun", "in": "query", "schema": map[string]string{"type": "string"}},
			},
			"responses": map[string]any{"200": map[string]string{"description": "OK"}},
		}}
	}
	if len(paths) == 0 {
		return nil
	}
	return map[string]any{
		"openapi": "3.0.0",
		"info":    map[string]string{"title": "Kubernetes", "version": versionInfo().GitVersion},
		"paths":   paths,
	}
}
