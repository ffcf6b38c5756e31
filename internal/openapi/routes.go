package openapi

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

// route is one operation of a document, independent of the OpenAPI
// version it is rendered in.
type route struct {
	path      string
	method    string // lower case: get, put, post, delete, patch
	opID      string // readCoreV1NamespacedPod
	tag       string // core_v1
	action    string // x-kubernetes-action; "" for discovery
	gvk       *schema.GroupVersionKind
	desc      string
	params    []param // every parameter, path ones included, sorted by name
	request   string  // model name of the body; "" for none
	consumes  []string
	responses []response
	produces  []string
}

type param struct {
	name, in, desc, typ string
}

type response struct {
	code  int
	desc  string
	model string // "" for a string body
}

var (
	mediaTypes   = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	watchMedia   = []string{"application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch"}
	patchTypes   = []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"}
	customPatch  = []string{"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"}
	anyMedia     = []string{"*/*"}
	noMedia      = []string{} // consumes nothing: v2 omits consumes (nil means anyMedia)
	prettyParam  = param{name: "pretty", in: "query", desc: "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).", typ: "string"}
	nsParam      = param{name: "namespace", in: "path", desc: "object name and auth scope, such as for teams and projects", typ: "string"}
	listParams   = optionParams(reflect.TypeFor[metav1.ListOptions]())
	createParams = optionParams(reflect.TypeFor[metav1.CreateOptions]())
	updateParams = optionParams(reflect.TypeFor[metav1.UpdateOptions]())
	patchParams  = optionParams(reflect.TypeFor[metav1.PatchOptions]())
	deleteParams = optionParams(reflect.TypeFor[metav1.DeleteOptions]())
)

const (
	statusModel        = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
	deleteOptionsModel = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
	patchModel         = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
	resourceListModel  = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList"
	watchEventModel    = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"
)

// optionParams are the query parameters an options struct (ListOptions,
// PodExecOptions, ...) decodes, described by its SwaggerDoc, as upstream's
// installer derives them.
func optionParams(t reflect.Type) []param {
	var out []param
	doc := swaggerDoc(t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if f.Anonymous || name == "" || name == "-" {
			continue
		}
		ft := deref(f.Type)
		if ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		typ, _, ok := simpleTypeFormat(ft)
		if !ok {
			continue // preconditions and other structs are body-only
		}
		out = append(out, param{name: name, in: "query", desc: doc[name], typ: typ})
	}
	return out
}

// resourceRoutes returns the operations served for res. model names the
// definition of a kind ("" when none is known).
func resourceRoutes(res *registry.Resource, model func(schema.GroupVersionKind) string) []route {
	gvk := res.GroupVersionKind()
	kind, list := model(gvk), model(gvk.GroupVersion().WithKind(res.ListKind))
	root := "/" + gvPath(res.GroupVersion())
	scope, pathParams := "", []param{prettyParam}
	if res.Namespaced {
		root += "/namespaces/{namespace}"
		scope = "Namespaced"
		pathParams = append(pathParams, nsParam)
	}
	collection := root + "/" + res.Resource
	item := collection + "/{name}"
	nameParam := param{name: "name", in: "path", desc: "name of the " + res.Kind, typ: "string"}
	itemParams := append([]param{nameParam}, pathParams...)
	patch := patchTypes
	if res.Unstructured {
		patch = customPatch
	}
	b := routeBuilder{gvk: gvk, kind: res.Kind}
	var out []route
	if res.HasVerb("list") {
		desc := "list objects of kind " + res.Kind
		if res.HasVerb("watch") {
			desc = "list or watch objects of kind " + res.Kind
		}
		out = append(out, b.list(collection, "list"+scope+res.Kind, desc, list, pathParams))
		if res.Namespaced {
			all := "/" + gvPath(res.GroupVersion()) + "/" + res.Resource
			out = append(out, b.list(all, "list"+res.Kind+"ForAllNamespaces", desc, list, []param{prettyParam}))
		}
	}
	if res.HasVerb("watch") && !res.Unstructured {
		out = append(out, watchRoutes(b, res, scope, pathParams, nameParam)...)
	}
	if res.HasVerb("create") {
		out = append(out, b.write(collection, "post", "create"+scope+res.Kind, "post", "create"+article(res.Kind)+res.Kind, kind, createParams, pathParams, 200, 201, 202))
	}
	if res.HasVerb("deletecollection") {
		out = append(out, b.deleteCollection(collection, "deleteCollection"+scope+res.Kind, pathParams))
	}
	if res.HasVerb("get") {
		out = append(out, b.read(item, "read"+scope+res.Kind, "read the specified "+res.Kind, kind, itemParams))
	}
	if res.HasVerb("update") {
		out = append(out, b.write(item, "put", "replace"+scope+res.Kind, "put", "replace the specified "+res.Kind, kind, updateParams, itemParams, 200, 201))
	}
	if res.HasVerb("delete") {
		// upstream's namespace storage wraps its store without saying it
		// answers with the object, so its delete is published as a Status
		deleted := statusModel
		if res.ReturnsDeletedObject() && !(res.Group == "" && res.Resource == "namespaces") {
			deleted = kind
		}
		r := b.write(item, "delete", "delete"+scope+res.Kind, "delete", "delete"+article(res.Kind)+res.Kind, deleted, deleteParams, itemParams, 200, 202)
		r.request = deleteOptionsModel
		out = append(out, r)
	}
	if res.HasVerb("patch") {
		r := b.write(item, "patch", "patch"+scope+res.Kind, "patch", "partially update the specified "+res.Kind, kind, patchParams, itemParams, 200, 201)
		r.request, r.consumes = patchModel, patch
		out = append(out, r)
	}
	for _, sub := range res.Subresources {
		subItemParams := append([]param{{name: "name", in: "path", desc: "name of the " + sub.Kind.Kind, typ: "string"}}, pathParams...)
		out = append(out, subresourceRoutes(res, sub, item+"/"+sub.Name, scope, subItemParams, patch, model)...)
	}
	return out
}

// watchRoutes are the deprecated watch paths upstream still serves and
// publishes for a built-in resource (/api/v1/watch/namespaces/{namespace}/pods,
// .../pods/{name}, /api/v1/watch/pods): a stream of WatchEvents, with the
// list options.
func watchRoutes(b routeBuilder, res *registry.Resource, scope string, pathParams []param, nameParam param) []route {
	const listDesc = "watch individual changes to a list of %s. deprecated: use the 'watch' parameter with a list operation instead."
	const itemDesc = "watch changes to an object of kind %s. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter."
	gv := "/" + gvPath(res.GroupVersion()) + "/watch"
	root := gv
	if res.Namespaced {
		root += "/namespaces/{namespace}"
	}
	collection := root + "/" + res.Resource
	watch := func(path, op, action, desc string, params []param) route {
		r := b.route(path, "get", op, action, fmt.Sprintf(desc, res.Kind), b.gvk, listParams, params)
		r.responses, r.produces = responses(watchEventModel, 200), append(append([]string(nil), mediaTypes...), watchMedia...)
		return r
	}
	out := []route{
		watch(collection, "watch"+scope+res.Kind+"List", "watchlist", listDesc, pathParams),
		watch(collection+"/{name}", "watch"+scope+res.Kind, "watch", itemDesc, append([]param{nameParam}, pathParams...)),
	}
	if res.Namespaced {
		out = append(out, watch(gv+"/"+res.Resource, "watch"+res.Kind+"ListForAllNamespaces", "watchlist", listDesc, []param{prettyParam}))
	}
	return out
}

// gvPath is a group-version's path below /api or /apis and its
// key in the v3 index: api/v1, apis/apps/v1.
func gvPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// discoveryRoute is the GET of a group-version's resource list.
func discoveryRoute(gv schema.GroupVersion) route {
	r := route{path: "/" + gvPath(gv) + "/", method: "get", desc: "get available resources",
		responses: []response{{code: 200, desc: "OK", model: resourceListModel}}, produces: mediaTypes, consumes: mediaTypes}
	r.opID, r.tag = operationID("getAPIResources", r.path)
	return r
}

// sortParams orders parameters by name, then by where they go ({path}
// in the path before ?path= in the query).
func sortParams(ps []param) []param {
	out := append([]param(nil), ps...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].name != out[j].name {
			return out[i].name < out[j].name
		}
		return out[i].in < out[j].in
	})
	return out
}

// article is the article upstream's GetArticleForNoun puts before a kind,
// padded with spaces: none for a plural ("Endpoints"), "an" before a vowel.
func article(kind string) string {
	switch {
	case strings.HasSuffix(kind, "s") && !strings.HasSuffix(kind, "ss"):
		return " "
	case kind != "" && strings.ContainsRune("aeiouAEIOU", rune(kind[0])):
		return " an "
	}
	return " a "
}
