package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation/path"

	"github.com/admitd/admitd/internal/registry"
)

// serveResource dispatches a request on a resource path to its verb.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, rq *request) {
	info := rq.info
	res, ok := s.cat.Lookup(info.gvr())
	if !ok && !s.builtinGroup(info.Group) {
		writeNotFoundPage(w, r) // apiextensions-apiserver's delegate
		return
	}
	if !ok {
		writeError(w, r, errNotFoundPath())
		return
	}
	if res.Deprecation != "" {
		addWarnings(rq, []string{res.Deprecation})
	}
	if page, err := resourceRouteError(res, info, r.Method); page {
		writeNotFoundPage(w, r)
		return
	} else if err != nil {
		writeError(w, r, err)
		return
	}
	if err := routeMediaError(res, info, r); err != nil {
		writeError(w, r, err)
		return
	}
	if info.Verb == "watch" && !res.HasVerb("watch") {
		// a list's ?watch=true, where the resource lists only
		writeError(w, r, errMethodNotSupported(res.GroupResource(), "watch"))
		return
	}
	rq.metered = true
	if m := s.cfg.RequestMetrics; m != nil && s.isLongRunning(info) {
		defer m.LongRunningStarted(longRunningMetricLabels(r, info))()
	}
	if err := checkPathName(info); err != nil {
		writeError(w, r, err)
		return
	}
	switch info.Verb {
	case "get":
		s.serveGet(w, r, rq, res)
	case "list":
		s.serveList(w, r, rq, res)
	case "watch":
		s.serveWatch(w, r, rq, res)
	case "create":
		s.serveCreate(w, r, rq, res)
	case "update":
		s.serveUpdate(w, r, rq, res)
	case "patch":
		s.servePatch(w, r, rq, res)
	case "delete":
		s.serveDelete(w, r, rq, res)
	case "deletecollection":
		s.serveDeleteCollection(w, r, rq, res)
	case "connect":
		s.serveConnect(w, r, rq, res)
	default:
		writeError(w, r, errMethodNotAllowed())
	}
}

// errNotFound is the NotFound Status of res's object name. Upstream's
// ComponentStatus storage names its resource in the singular.
func errNotFound(res *registry.Resource, name string) error {
	gr := res.GroupResource()
	if gr.Group == "" && gr.Resource == "componentstatuses" {
		gr.Resource = "componentstatus"
	}
	return apierrors.NewNotFound(gr, name)
}

// checkPathName refuses, as upstream's storage key functions do, a name in
// the URL that cannot be a path segment (".", "..", "%") when it names the
// object read or written.
func checkPathName(info *requestInfo) error {
	if info.Name == "" || info.Verb == "watch" || info.Verb == "create" && info.Subresource == "" {
		return nil
	}
	if msgs := path.IsValidPathSegmentName(info.Name); len(msgs) > 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("Name parameter invalid: %q: %s", info.Name, strings.Join(msgs, ";")))
	}
	return nil
}

// resourceRouteError is what answers a request on res's paths that no verb
// serves: apiextensions-apiserver's handler for a custom resource, the
// route table for a built-in one. page: the plain-text 404 page.
func resourceRouteError(res *registry.Resource, info *requestInfo, method string) (page bool, err error) {
	if res.Unstructured {
		return customRouteError(res, info, method)
	}
	if !res.Namespaced && info.Namespace != "" && !(res.Group == "" && res.Resource == "namespaces") {
		return false, errNotFoundPath()
	}
	return false, routeError(res, info, method)
}
