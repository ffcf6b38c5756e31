package openapi

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

// routeBuilder makes the routes of one resource.
type routeBuilder struct {
	gvk  schema.GroupVersionKind
	kind string
}

func (b routeBuilder) route(path, method, op, action, desc string, gvk schema.GroupVersionKind, params ...[]param) route {
	r := route{path: path, method: method, action: action, desc: desc, gvk: &gvk}
	for _, ps := range params {
		r.params = append(r.params, ps...)
	}
	r.params = sortParams(r.params)
	r.opID, r.tag = operationID(op, path)
	return r
}

func responses(model string, codes ...int) []response {
	desc := map[int]string{200: "OK", 201: "Created", 202: "Accepted"}
	out := make([]response, len(codes))
	for i, c := range codes {
		out[i] = response{code: c, desc: desc[c], model: model}
	}
	return out
}

func (b routeBuilder) list(path, op, desc, list string, pathParams []param) route {
	r := b.route(path, "get", op, "list", desc, b.gvk, listParams, pathParams)
	r.responses, r.produces = responses(list, 200), append(append([]string(nil), mediaTypes...), watchMedia...)
	return r
}

func (b routeBuilder) read(path, op, desc, model string, pathParams []param) route {
	r := b.route(path, "get", op, "get", desc, b.gvk, pathParams)
	r.responses, r.produces = responses(model, 200), mediaTypes
	return r
}

// write is a create, replace, delete or patch: a body in, model out.
func (b routeBuilder) write(path, method, op, action, desc, model string, query, pathParams []param, codes ...int) route {
	r := b.route(path, method, op, action, desc, b.gvk, query, pathParams)
	r.request, r.consumes = model, anyMedia
	r.responses, r.produces = responses(model, codes...), mediaTypes
	return r
}

func (b routeBuilder) deleteCollection(path, op string, pathParams []param) route {
	var query []param
	for _, p := range listParams {
		if p.name != "watch" && p.name != "allowWatchBookmarks" {
			query = append(query, p)
		}
	}
	for _, p := range deleteParams {
		if p.name != "dryRun" || !hasParam(query, "dryRun") {
			query = append(query, p)
		}
	}
	r := b.route(path, "delete", op, "deletecollection", "delete collection of "+b.kind, b.gvk, query, pathParams)
	r.request, r.consumes = deleteOptionsModel, anyMedia
	r.responses, r.produces = responses(statusModel, 200), mediaTypes
	return r
}

func hasParam(ps []param, name string) bool {
	for _, p := range ps {
		if p.name == name {
			return true
		}
	}
	return false
}

// subresourceRoutes are the operations of one subresource: get/update/patch
// of status and scale style subresources, create of eviction style ones,
// and connect operations for those whose kind is an options type (exec,
// attach, portforward, proxy).
func subresourceRoutes(res *registry.Resource, sub registry.Subresource, path, scope string, itemParams []param, patch []string, model func(schema.GroupVersionKind) string) []route {
	b := routeBuilder{gvk: sub.Kind, kind: res.Kind}
	name := strings.ToUpper(sub.Name[:1]) + sub.Name[1:]
	of := sub.Name + " of "
	if opts, ok := connectOptions(sub.Kind); ok {
		return connectRoutes(b, sub, path, scope+res.Kind+name, res.Kind, itemParams, opts)
	}
	m := model(sub.Kind)
	var out []route
	for _, verb := range sub.Verbs {
		switch verb {
		case "get":
			// pods/log reads PodLogOptions and answers text.
			opts, isText := connectOptions(res.GroupVersion().WithKind(res.Kind + name + "Options"))
			r := b.read(path, "read"+scope+res.Kind+name, "read "+of+"the specified "+res.Kind, m, append(opts, itemParams...))
			if isText {
				r.responses[0].model = ""
				r.produces = append([]string{"text/plain"}, mediaTypes...)
			}
			out = append(out, r)
		case "update":
			out = append(out, b.write(path, "put", "replace"+scope+res.Kind+name, "put", "replace "+of+"the specified "+res.Kind, m, updateParams, itemParams, 200, 201))
		case "patch":
			r := b.write(path, "patch", "patch"+scope+res.Kind+name, "patch", "partially update "+of+"the specified "+res.Kind, m, patchParams, itemParams, 200, 201)
			r.request, r.consumes = patchModel, patch
			out = append(out, r)
		case "create":
			out = append(out, b.write(path, "post", "create"+scope+res.Kind+name, "post", "create "+strings.TrimSuffix(of, " ")+article(res.Kind)+res.Kind, m, createParams, itemParams, 200, 201, 202))
		}
	}
	return out
}

// connectOptions returns the query parameters of an options kind
// (PodExecOptions, PodLogOptions, ...); false when gvk is not one.
func connectOptions(gvk schema.GroupVersionKind) ([]param, bool) {
	if !strings.HasSuffix(gvk.Kind, "Options") {
		return nil, false
	}
	obj, err := registry.Scheme().New(gvk)
	if err != nil {
		return nil, false
	}
	return optionParams(reflect.TypeOf(obj).Elem()), true
}

// connectRoutes are upstream's connect operations: one per HTTP method the
// subresource accepts, answering a string. A proxy also takes HEAD and
// OPTIONS, and has the same operations again under .../proxy/{path}.
func connectRoutes(b routeBuilder, sub registry.Subresource, path, suffix, kind string, itemParams, opts []param) []route {
	var pathParams []param
	for _, p := range itemParams {
		if p.name != "pretty" {
			pathParams = append(pathParams, p)
		}
	}
	methods := connectMethods(sub)
	out := connectOperations(b, sub, path, suffix, kind, methods, opts, pathParams)
	if sub.Name == "proxy" {
		withPath := append([]param{{name: "path", in: "path", desc: "path to the resource", typ: "string"}}, pathParams...)
		out = append(out, connectOperations(b, sub, path+"/{path}", suffix+"WithPath", kind, methods, opts, withPath)...)
	}
	return out
}

// connectMethods are the HTTP methods of a connect subresource, from its
// verbs.
func connectMethods(sub registry.Subresource) []string {
	byVerb := map[string]string{"get": "get", "create": "post", "update": "put", "patch": "patch", "delete": "delete"}
	var out []string
	for _, verb := range sub.Verbs {
		if m, ok := byVerb[verb]; ok {
			out = append(out, m)
		}
	}
	if sub.Name == "proxy" {
		out = append(out, "head", "options")
	}
	return out
}

func connectOperations(b routeBuilder, sub registry.Subresource, path, suffix, kind string, methods []string, opts, pathParams []param) []route {
	var out []route
	for _, m := range methods {
		title := strings.ToUpper(m[:1]) + m[1:]
		r := b.route(path, m, "connect"+title+suffix, "connect", "connect "+strings.ToUpper(m)+" requests to "+sub.Name+" of "+kind, sub.Kind, opts, pathParams)
		r.responses, r.produces = []response{{code: 200, desc: "OK"}}, anyMedia
		out = append(out, r)
	}
	return out
}
