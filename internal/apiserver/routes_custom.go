package apiserver

import (
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

// Custom resources are not served by kube-apiserver's route table but by
// apiextensions-apiserver's handler, which dispatches on the request info's
// verb alone: HEAD is a get or list, POST a create whatever the path names
// after the collection, and segments after a subresource are ignored.

// customVerbs are the verbs that handler serves, by subresource.
var (
	customObjectVerbs      = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	customSubresourceVerbs = []string{"get", "update", "patch"}
)

// customRouteError is that handler's answer to a request on a custom
// resource that it does not serve: page is true when the request falls
// through to the plain-text 404 page (a scope that is not the resource's;
// a namespaced resource is listed and watched across namespaces only).
func customRouteError(res *registry.Resource, info *requestInfo, method string) (page bool, err error) {
	verb := customVerb(info, method)
	switch {
	case !res.Namespaced && info.Namespace != "":
		return true, nil
	case res.Namespaced && info.Namespace == "" && verb != "list" && verb != "watch":
		return true, nil
	}
	gr := schema.GroupResource{Group: res.Group, Resource: res.Resource}
	verbs := customObjectVerbs
	if info.Subresource != "" {
		if _, ok := res.Subresource(info.Subresource); !ok {
			return false, apierrors.NewNotFound(gr, info.Name)
		}
		verbs = customSubresourceVerbs
	}
	if !slices.Contains(verbs, verb) {
		return false, apierrors.NewMethodNotSupported(gr, verb)
	}
	if info.Name == "" && (verb == "update" || verb == "patch") {
		return false, apierrors.NewBadRequest("name must be provided")
	}
	return false, nil
}

// customVerb is the request info's verb upstream gives a resource request:
// none for a method it has no verb for (OPTIONS).
func customVerb(info *requestInfo, method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return info.Verb
	}
	return ""
}

// builtinGroup: some built-in resource is served in group (core
// included), so kube-apiserver's route table, which owns every path under
// a built-in group, not apiextensions-apiserver, answers paths in it.
func (s *Server) builtinGroup(group string) bool {
	if group == "" {
		return true
	}
	for _, res := range s.cat.Resources() {
		if res.Group == group && !res.Unstructured {
			return true
		}
	}
	return false
}
