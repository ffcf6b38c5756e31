package apiserver

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// requestInfo is what the URL and method of an API request say: which
// resource, which object, which verb.
type requestInfo struct {
	// IsResource is false for non-resource paths such as /version.
	IsResource  bool
	Path        string
	Verb        string // get, list, watch, create, update, patch, delete, deletecollection, connect
	APIPrefix   string // api or apis
	Group       string
	Version     string
	Namespace   string
	Resource    string
	Subresource string
	Name        string
	// SelectorName is the name a list or watch without one in its path
	// asks for with fieldSelector=metadata.name=NAME: upstream's request
	// info takes it as the request's name, so RBAC's resourceNames, the
	// Node authorizer, audit and flow control see it.
	SelectorName string
	// FieldSelector is a list's, watch's or collection delete's field
	// selector, parsed once for the request name, authorization and the
	// watch count; nil when it has none or it does not parse.
	FieldSelector fields.Selector
	// WatchPath marks the deprecated /watch/ prefix.
	WatchPath bool
	// Trailing marks segments after the subresource
	// (/api/v1/nodes/{name}/proxy/{path}): only a proxy serves them.
	Trailing bool
}

// objectName is the object the request names, in its path or, for a list
// or watch, in its field selector.
func (ri *requestInfo) objectName() string {
	if ri.Name != "" {
		return ri.Name
	}
	return ri.SelectorName
}

func (ri *requestInfo) gvr() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: ri.Group, Version: ri.Version, Resource: ri.Resource}
}

var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

var connectSubresources = map[string]bool{"exec": true, "attach": true, "portforward": true, "proxy": true}

// parseRequestInfo interprets an API path, following the upstream layout:
//
//	/api/v1/namespaces/{ns}/{resource}/{name}/{subresource}
//	/apis/{group}/{version}/{resource}/{name}
func parseRequestInfo(r *http.Request) *requestInfo {
	ri := &requestInfo{Path: r.URL.Path, Verb: lowerMethod(r.Method)}
	parts := splitPath(r.URL.Path)
	if len(parts) < 2 || (parts[0] != "api" && parts[0] != "apis") {
		return ri
	}
	ri.APIPrefix = parts[0]
	parts = parts[1:]
	if ri.APIPrefix == "apis" {
		if len(parts) < 2 {
			return ri
		}
		ri.Group = parts[0]
		parts = parts[1:]
	}
	ri.Version = parts[0]
	parts = parts[1:]
	if len(parts) == 0 {
		return ri
	}
	ri.IsResource = true
	// The deprecated /watch/ prefix (/api/v1/watch/namespaces/{ns}/pods)
	// makes any request a watch, as upstream's request info reads it;
	// only GET is served (checkVerb).
	watchPath := parts[0] == "watch" && len(parts) > 1
	if watchPath {
		ri.WatchPath = true
		parts = parts[1:]
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		ri.Namespace = parts[1]
		// /namespaces/{name}[/status|/finalize] is the namespace object
		// itself, whose request namespace is its own name.
		if len(parts) > 2 && !namespaceSubresources[parts[2]] {
			parts = parts[2:]
		}
	}
	ri.Resource = parts[0]
	if len(parts) > 1 {
		ri.Name = parts[1]
	}
	if len(parts) > 2 {
		ri.Subresource = parts[2]
	}
	ri.Trailing = len(parts) > 3
	ri.Verb = verbFor(r, ri)
	if watchPath {
		ri.Verb = "watch"
	}
	switch ri.Verb {
	case "list", "watch":
		ri.FieldSelector = requestFieldSelector(r)
		ri.SelectorName = selectorName(ri.FieldSelector)
	case "deletecollection":
		ri.FieldSelector = requestFieldSelector(r)
	}
	return ri
}

// requestFieldSelector is the request's fieldSelector parameter, parsed;
// nil when it is absent or does not parse.
func requestFieldSelector(r *http.Request) fields.Selector {
	if !strings.Contains(r.URL.RawQuery, "fieldSelector") {
		return nil
	}
	raw := r.URL.Query()["fieldSelector"]
	if len(raw) == 0 {
		return nil
	}
	sel, err := fields.ParseSelector(raw[0])
	if err != nil {
		return nil
	}
	return sel
}

// selectorName is the metadata.name sel requires exactly, when it is a
// valid path segment (upstream's rule); "" when it names no single object.
func selectorName(sel fields.Selector) string {
	if sel == nil {
		return ""
	}
	name, ok := sel.RequiresExactMatch("metadata.name")
	if !ok || len(path.IsValidPathSegmentName(name)) > 0 {
		return ""
	}
	return name
}

func verbFor(r *http.Request, ri *requestInfo) string {
	if connectSubresources[ri.Subresource] {
		return "connect"
	}
	switch r.Method {
	case http.MethodPost:
		return "create"
	case http.MethodGet, http.MethodHead:
		if ri.Name != "" {
			return "get" // ?watch is a collection's parameter only
		}
		if isWatch(r) {
			return "watch"
		}
		return "list"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if ri.Name == "" {
			return "deletecollection"
		}
		return "delete"
	}
	return lowerMethod(r.Method)
}

// lowerMethod is the method in lower case, without allocating for the
// methods clients use.
func lowerMethod(m string) string {
	switch m {
	case http.MethodGet:
		return "get"
	case http.MethodPost:
		return "post"
	case http.MethodPut:
		return "put"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	case http.MethodHead:
		return "head"
	case http.MethodOptions:
		return "options"
	}
	return strings.ToLower(m)
}

// isWatch reads the watch parameter as upstream's parameter codec reads
// booleans: present and neither "0" nor "false" ("", "yes" and "F" are
// true).
func isWatch(r *http.Request) bool {
	return queryBool(r.URL.Query()["watch"])
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// kubeVerb is the verb upstream's request info gives the request, which
// authorization and audit see: as Verb, except that a connect request
// (exec, attach, portforward, proxy) is named by its method, so that RBAC's
// "create pods/exec" or "get pods/portforward" allows it.
func (ri *requestInfo) kubeVerb(r *http.Request) string {
	if ri.Verb != "connect" {
		return ri.Verb
	}
	switch r.Method {
	case http.MethodPost:
		return "create"
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}
