package apiserver

import (
	"net/http"
	"strings"

	"github.com/munnerz/goautoneg"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

// Endpoints that do not convert what they answer (an error's Status, a
// subresource's object) negotiate as upstream's default endpoint
// restrictions do: the Accept clauses in goautoneg's order (by q, then the
// more specific first), the first that names a media type the object can
// be written in, without as=, g= or v=, wins; an answer no clause accepts
// is JSON.

// Stand-ins for acceptClause's resource: one whose objects have a protobuf
// form, one (a custom resource's) whose objects have none.
var (
	protobufCapable   = &registry.Resource{}
	protobufIncapable = &registry.Resource{Unstructured: true}
)

// objectMedia is the media type writeObject answers r in, for an object
// that has a protobuf form or not.
func objectMedia(r *http.Request, hasProtobuf bool) string {
	header := r.Header.Get("Accept")
	switch header {
	case "", mediaJSON, mediaJSON + ", */*": // the last: JSON clients of client-go
		return mediaJSON
	case mediaProtobuf + ", */*", mediaProtobuf + ",*/*": // typed clients
		if hasProtobuf {
			return mediaProtobuf
		}
		return mediaJSON
	}
	res := protobufIncapable
	if hasProtobuf {
		res = protobufCapable
	}
	for _, clause := range goautoneg.ParseAccept(header) {
		if !plainClause(clause.Params) {
			continue
		}
		for _, media := range outputMediaTypes {
			if !clauseMatches(clause, media) {
				continue
			}
			if _, ok := acceptClause(clause.Params, media, res); ok {
				return media
			}
		}
	}
	return mediaJSON
}

// hasProtobufForm says whether obj can be written in Kubernetes protobuf:
// a built-in kind (not a custom resource's unstructured object).
func hasProtobufForm(obj any) bool {
	ro, ok := obj.(runtime.Object)
	if !ok {
		return false
	}
	_, unstructured := ro.(runtime.Unstructured)
	return !unstructured
}

// acceptsJSON says whether r's Accept header takes plain JSON in some
// clause with a q above 0 (JSON itself or a wildcard covering it).
func acceptsJSON(r *http.Request) bool {
	header := r.Header.Get("Accept")
	if header == "" {
		return true
	}
	if !strings.Contains(header, ";") && (strings.Contains(header, mediaJSON) || strings.Contains(header, "*/*")) {
		return true
	}
	for _, clause := range goautoneg.ParseAccept(header) {
		if clause.Q > 0 && plainClause(clause.Params) && clauseMatches(clause, mediaJSON) {
			if _, ok := acceptClause(clause.Params, mediaJSON, protobufCapable); ok {
				return true
			}
		}
	}
	return false
}

// collectionMedia adjusts a list's or watch's negotiated output: admitd
// keeps objects as JSON, so it answers lists and watch events of whole
// objects in JSON to a client that prefers protobuf but takes JSON too
// (every client-go client does), which costs it far less than decoding
// and re-encoding every object; a client that takes only protobuf gets
// protobuf, as from upstream.
func collectionMedia(r *http.Request, n negotiated) negotiated {
	if n.media == mediaProtobuf && n.as == "" && acceptsJSON(r) {
		n.media = mediaJSON
	}
	return n
}
