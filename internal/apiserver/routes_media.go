package apiserver

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

// Media types a built-in resource's routes declare, as kube-apiserver's
// installer does: what every route produces, what a list or watch also
// streams, and what a PATCH consumes.
var (
	routeMedia       = []string{mediaJSON, mediaYAML, mediaProtobuf}
	routeStreamMedia = []string{mediaJSON, mediaYAML, mediaProtobuf, mediaJSON + ";stream=watch", mediaProtobuf + ";stream=watch"}
	routeLogMedia    = []string{"text/plain", mediaJSON, mediaYAML, mediaProtobuf}
	routePatchMedia  = []string{mediaJSONPatch, mediaMergePatch, mediaStrategicPatch, mediaApplyPatch}
)

// routeMediaError is go-restful's choice among a built-in resource's
// routes, after the method: a PATCH whose Content-Type is no patch type
// is its 415, an Accept that names none of the media types the route
// produces (exactly, parameters aside, or */*) its 406. Custom resources
// and connect routes (which take and produce anything) have no such check.
func routeMediaError(res *registry.Resource, info *requestInfo, r *http.Request) error {
	if res.Unstructured || info.Verb == "connect" {
		return nil
	}
	if r.Method == http.MethodPatch && !restfulMatches(r.Header.Get("Content-Type"), routePatchMedia, "application/octet-stream") {
		return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", schema.GroupResource{}, "", "415: Unsupported Media Type", 0, false)
	}
	produces := routeMedia
	switch {
	case info.Verb == "list" || info.Verb == "watch":
		produces = routeStreamMedia
	case info.Subresource == "log":
		produces = routeLogMedia
	}
	if !restfulMatches(r.Header.Get("Accept"), produces, "") {
		return apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "", schema.GroupResource{}, "",
			"406: Not Acceptable\n\nAvailable representations: "+strings.Join(produces, ", "), 0, false)
	}
	return nil
}

// restfulMatches is go-restful's test of a Content-Type or Accept header
// against a route's media types: some comma-separated part, parameters
// cut, is */* or one of them. An empty header matches, or is taken as
// empty when that is "".
func restfulMatches(header string, media []string, empty string) bool {
	if header == "" {
		if empty == "" {
			return true
		}
		header = empty
	}
	for part := range strings.SplitSeq(header, ",") {
		mt, _, _ := strings.Cut(part, ";")
		mt = strings.TrimSpace(mt)
		if mt == "*/*" {
			return true
		}
		for _, m := range media {
			if m == mt {
				return true
			}
		}
	}
	return false
}
