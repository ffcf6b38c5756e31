package openapi

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/runtime/schema"
	aggregatoropenapi "k8s.io/kube-aggregator/pkg/generated/openapi"
	builderutil "k8s.io/kube-openapi/pkg/builder3/util"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/internal/registry"
)

// apiregistrationModelPrefix starts the model names of the APIService types.
const apiregistrationModelPrefix = "io.k8s.kube-aggregator.pkg.apis.apiregistration."

// builder builds documents from catalogue resources. It keeps the
// definitions of built-in types, which never change, across builds. It is
// not safe for concurrent use.
type builder struct {
	gen      *generator
	namer    gvkNamer
	typeMeta spec.Schema
	version  string
}

func newBuilder(version string) *builder {
	ref := func(name string) spec.Ref { return spec.MustCreateRef(v3RefPrefix + name) }
	upstream := generatedopenapi.GetOpenAPIDefinitions(ref)
	// kube-aggregator's output for the APIService types (its meta types are
	// apiextensions-apiserver's too).
	for name, def := range aggregatoropenapi.GetOpenAPIDefinitions(ref) {
		if strings.HasPrefix(name, apiregistrationModelPrefix) {
			upstream[name] = def
		}
	}
	gen := newGenerator(loadSMD(registry.Scheme()), upstream, loadMarkers())
	for _, n := range []string{objectMetaName, listMetaName, typeMetaName, statusModel, deleteOptionsModel, patchModel, resourceListModel, watchEventModel} {
		gen.defineUpstream(n)
	}
	for _, n := range discoveryModels {
		gen.defineUpstream(n)
	}
	return &builder{
		gen:      gen,
		namer:    newGVKNamer(namerScheme()),
		typeMeta: gen.defs[typeMetaName].schema,
		version:  version,
	}
}

// contents are the routes and custom definitions of one document.
type contents struct {
	routes []route
	custom map[string]*definition
}

func (b *builder) collect(resources []*registry.Resource) contents {
	c := contents{custom: map[string]*definition{}}
	seen := map[schema.GroupVersion]bool{}
	for _, res := range resources {
		if !seen[res.GroupVersion()] {
			seen[res.GroupVersion()] = true
			c.routes = append(c.routes, discoveryRoute(res.GroupVersion()))
		}
		if res.Unstructured {
			maps.Copy(c.custom, customDefinitions(res, b.typeMeta))
		}
		c.routes = append(c.routes, resourceRoutes(res, b.modelOf(res))...)
	}
	return c
}

// modelOf returns the function naming the definition of a kind of res's
// routes: the custom definitions of a custom resource, else the generated
// definition of the Go type registered for the kind.
func (b *builder) modelOf(res *registry.Resource) func(schema.GroupVersionKind) string {
	return func(gvk schema.GroupVersionKind) string {
		if res.Unstructured && gvk.GroupVersion() == res.GroupVersion() && (gvk.Kind == res.Kind || gvk.Kind == res.ListKind) {
			return customModelName(gvk)
		}
		obj, err := registry.Scheme().New(gvk)
		if err != nil {
			return ""
		}
		return b.gen.define(reflect.TypeOf(obj))
	}
}

func (c contents) lookup(b *builder, name string) *definition {
	if d, ok := c.custom[name]; ok {
		return d
	}
	return b.gen.defs[name]
}

// models returns, sorted, every model the routes refer to, directly or
// through other models.
func (c contents) models(b *builder) []string {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(name string) {
		if name == "" || seen[name] {
			return
		}
		d := c.lookup(b, name)
		if d == nil {
			return
		}
		seen[name] = true
		for _, dep := range d.deps {
			visit(dep)
		}
	}
	for _, r := range c.routes {
		visit(r.request)
		for _, resp := range r.responses {
			visit(resp.model)
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// withGVK adds the x-kubernetes-group-version-kind of every kind the
// scheme registers the model's type as; in the document of one
// group-version (doc not nil), of those in core/v1 and doc only when there
// are any (the meta types every group-version registers: DeleteOptions,
// Status, WatchEvent), as kube-apiserver's v3 documents list them.
func (b *builder) withGVK(name string, s spec.Schema, doc *schema.GroupVersion) spec.Schema {
	ext := b.namer.extensions(name, doc)
	if len(ext) == 0 {
		return s
	}
	s.Extensions = maps.Clone(s.Extensions)
	if s.Extensions == nil {
		s.Extensions = spec.Extensions{}
	}
	maps.Copy(s.Extensions, ext)
	return s
}

func (b *builder) info() *spec.Info {
	return &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: b.version}}
}

// v3 builds the OpenAPI v3 document of the resources of one group-version.
func (b *builder) v3(resources []*registry.Resource) *spec3.OpenAPI {
	var doc *schema.GroupVersion
	if len(resources) > 0 {
		gv := resources[0].GroupVersion()
		doc = &gv
	}
	return b.v3Of(b.collect(resources), doc)
}

// discoveryV3 builds the OpenAPI v3 document of a discovery endpoint, by
// its index path (api, apis/apps, version).
func (b *builder) discoveryV3(indexPath string) *spec3.OpenAPI {
	return b.v3Of(contents{routes: []route{discoveryDocRoute(indexPath)}}, nil)
}

func (b *builder) v3Of(c contents, doc *schema.GroupVersion) *spec3.OpenAPI {
	schemas := map[string]*spec.Schema{}
	for _, name := range c.models(b) {
		s := b.withGVK(name, c.lookup(b, name).schema, doc)
		schemas[name] = builderutil.WrapRefs(&s)
	}
	return &spec3.OpenAPI{
		Version: "3.0.0",
		Info:    b.info(),
		Paths:   v3Paths(c.routes),
		Components: &spec3.Components{Schemas: schemas, SecuritySchemes: spec3.SecuritySchemes{
			"BearerToken": {SecuritySchemeProps: spec3.SecuritySchemeProps{Type: "apiKey", Description: "Bearer Token authentication", Name: "authorization", In: "header"}},
		}},
	}
}

// v2 builds the OpenAPI v2 document of every resource and of the discovery
// endpoints at discoveryPaths (index paths: api, apis/apps, version), which
// kube-apiserver's single v2 document describes beside the resources:
// definitions take their v2 form, lose their defaults (as upstream prunes
// them) and refer to #/definitions/; parameters are shared
// (shareV2Parameters).
func (b *builder) v2(resources []*registry.Resource, discoveryPaths []string) (*spec.Swagger, error) {
	c := b.collect(resources)
	for _, p := range discoveryPaths {
		c.routes = append(c.routes, discoveryDocRoute(p))
	}
	defs := spec.Definitions{}
	for _, name := range c.models(b) {
		d := c.lookup(b, name)
		s := d.schema
		if d.v2 != nil {
			s = *d.v2
		}
		s = b.withGVK(name, s, nil)
		defs[name] = *toV2.WalkSchema(&s)
	}
	sw := &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        b.info(),
		Paths:       v2Paths(c.routes),
		Definitions: defs,
		SecurityDefinitions: spec.SecurityDefinitions{
			"BearerToken": {SecuritySchemeProps: spec.SecuritySchemeProps{Type: "apiKey", Description: "Bearer Token authentication", Name: "authorization", In: "header"}},
		},
		Security: []map[string][]string{{"BearerToken": {}}},
	}}
	return sw, shareV2Parameters(sw)
}

// toV2 rewrites refs to #/definitions/ and prunes defaults, copying what
// it changes.
var toV2 = schemamutation.Walker{
	SchemaCallback: func(s *spec.Schema) *spec.Schema {
		if s.Default == nil {
			return s
		}
		c := *s
		c.Default = nil
		return &c
	},
	RefCallback: func(r *spec.Ref) *spec.Ref {
		name, ok := strings.CutPrefix(r.String(), v3RefPrefix)
		if !ok {
			return r
		}
		out := spec.MustCreateRef(v2RefPrefix + name)
		return &out
	},
}

// ReflectedDefinitions returns the v3 schemas of the k8s.io/api models the
// built-in resources' documents refer to, as reflection alone generates
// them (no marker table). test/upstream/openapimarkers derives the table
// from their differences with upstream's openapi-gen output.
func ReflectedDefinitions() map[string]spec.Schema {
	b := newBuilder("")
	b.gen.markers = nil
	c := b.collect(registry.NewCatalogue().Resources())
	out := map[string]spec.Schema{}
	for _, name := range c.models(b) {
		if strings.HasPrefix(name, apiModelPrefix) {
			out[name] = c.lookup(b, name).schema
		}
	}
	return out
}
