package apiserver

import (
	"net/http"

	"github.com/admitd/admitd/internal/registry"
)

// routeError is what kube-apiserver's route table answers a request on a
// resource path no handler serves: the generic 404 when no route has the
// path, the generic 405 when the path's routes lack the method (HEAD and
// OPTIONS included: only a proxy serves them). nil when a handler does.
// The table is upstream's installer's: a collection path has GET for
// list, POST for create and DELETE for deletecollection (the cluster-wide
// path of a namespaced resource lists only), an item path GET, PUT, PATCH
// and DELETE for get, update, patch and delete, the /watch/ paths GET for
// watch, a subresource the methods of its verbs, and only a proxy takes
// segments after its name.
func routeError(res *registry.Resource, info *requestInfo, method string) error {
	routed, allowed := route(res, info, method)
	switch {
	case !routed:
		return errNotFoundPath()
	case !allowed:
		return errMethodNotAllowed()
	}
	return nil
}

// route says whether the request's path has a route, and whether one of
// its routes takes method.
func route(res *registry.Resource, info *requestInfo, method string) (routed, allowed bool) {
	switch {
	case res.Namespaced && info.Namespace == "" && info.Name != "":
		return false, false // a named object lives under its namespace only
	case info.Subresource != "":
		return subresourceRoute(res, info, method)
	case info.WatchPath:
		return routeOf(res.Verbs, watchMethods, method)
	case info.Name != "":
		return routeOf(res.Verbs, itemMethods, method)
	case res.Namespaced && info.Namespace == "":
		return routeOf(res.Verbs, listMethods, method)
	}
	return routeOf(res.Verbs, collectionMethods, method)
}

func subresourceRoute(res *registry.Resource, info *requestInfo, method string) (routed, allowed bool) {
	sub, ok := res.Subresource(info.Subresource)
	switch {
	case !ok || info.WatchPath:
		return false, false
	case sub.Name == "proxy":
		return true, true // a proxy connects every method
	case info.Trailing:
		return false, false
	}
	return routeOf(sub.Verbs, subresourceMethods, method)
}

var (
	watchMethods      = map[string]string{"watch": http.MethodGet}
	listMethods       = map[string]string{"list": http.MethodGet}
	itemMethods       = map[string]string{"get": http.MethodGet, "update": http.MethodPut, "patch": http.MethodPatch, "delete": http.MethodDelete}
	collectionMethods = map[string]string{"list": http.MethodGet, "create": http.MethodPost, "deletecollection": http.MethodDelete}
	// subresourceMethods: a connect subresource (exec, attach,
	// portforward) lists get and create for its GET and POST
	subresourceMethods = map[string]string{"get": http.MethodGet, "create": http.MethodPost, "update": http.MethodPut, "patch": http.MethodPatch, "delete": http.MethodDelete}
)

// routeOf reads a route from verbs by table, the method of each verb that
// has one: routed when any has, allowed when one is method.
func routeOf(verbs []string, table map[string]string, method string) (routed, allowed bool) {
	for _, v := range verbs {
		if m, ok := table[v]; ok {
			routed = true
			allowed = allowed || m == method
		}
	}
	return routed, allowed
}
