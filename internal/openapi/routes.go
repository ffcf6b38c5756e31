package openapi

import (
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
	prettyParam  = param{name: "pretty", in: "query", desc: "If 'true', then the output is pretty printed.", typ: "string"}
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
		out = append(out, b.list(collection, "list"+scope+res.Kind, "list or watch objects of kind "+res.Kind, list, pathParams))
		if res.Namespaced {
			all := "/" + gvPath(res.GroupVersion()) + "/" + res.Resource
			out = append(out, b.list(all, "list"+res.Kind+"ForAllNamespaces", "list or watch objects of kind "+res.Kind, list, []param{prettyParam}))
		}
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
		r := b.write(item, "delete", "delete"+scope+res.Kind, "delete", "delete"+article(res.Kind)+res.Kind, statusModel, deleteParams, itemParams, 200, 202)
		r.request = deleteOptionsModel
		out = append(out, r)
	}
	if res.HasVerb("patch") {
		r := b.write(item, "patch", "patch"+scope+res.Kind, "patch", "partially update the specified "+res.Kind, kind, patchParams, itemParams, 200, 201)
		r.request, r.consumes = patchModel, patch
		out = append(out, r)
	}
	for _, sub := range res.Subresources {
		out = append(out, subresourceRoutes(res, sub, item+"/"+sub.Name, scope, itemParams, patch, model)...)
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
		responses: []response{{code: 200, desc: "OK", model: resourceListModel}}, produces: mediaTypes}
	r.opID, r.tag = operationID("getAPIResources", r.path)
	return r
}

func sortParams(ps []param) []param {
	out := append([]param(nil), ps...)
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
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
