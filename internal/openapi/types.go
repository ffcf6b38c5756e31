package openapi

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// v3RefPrefix is where refs point while definitions are generated; the v2
// document rewrites them to #/definitions/.
const v3RefPrefix = "#/components/schemas/"

// definition is the generated schema of one model.
type definition struct {
	schema spec.Schema  // refs point at v3RefPrefix
	v2     *spec.Schema // the OpenAPI v2 form, when it differs (oneOf types)
	deps   []string     // model names schema refers to, sorted
}

// generator generates by reflection the schemas of Go types and of every
// type they refer to, memoised by model name, with the markers of the
// table (what openapi-gen reads from comments) added. A type upstream's
// openapi-gen output covers (upstream; meta, runtime and apiextensions
// types) takes that definition instead. It is not safe for concurrent use.
type generator struct {
	smd      smdIndex
	upstream map[string]common.OpenAPIDefinition
	markers  *MarkerTable // nil: reflection alone
	defs     map[string]*definition
}

func newGenerator(smd smdIndex, upstream map[string]common.OpenAPIDefinition, markers *MarkerTable) *generator {
	return &generator{smd: smd, upstream: upstream, markers: markers, defs: map[string]*definition{}}
}

// define returns the model name of t (a struct, or a pointer to one),
// generating its definition and its dependencies' on first use.
func (g *generator) define(t reflect.Type) string {
	t = deref(t)
	name := modelName(t)
	if _, ok := g.defs[name]; ok || g.defineUpstream(name) {
		return name
	}
	def := &definition{}
	g.defs[name] = def // before recursing: types may refer to themselves
	doc := swaggerDoc(t)
	if doc[""] == "" && extraDocs[name] != "" {
		doc = map[string]string{"": extraDocs[name]}
	}
	if types, format, ok := customTypeFormat(t); ok {
		def.schema, def.v2 = selfDescribed(t, doc[""], types, format)
		return name
	}
	refs := map[string]bool{}
	s := spec.Schema{SchemaProps: spec.SchemaProps{Description: doc[""], Type: []string{"object"}}}
	s.Required = g.members(t, name, &s, refs)
	s.Extensions = g.smd.typeExtensions(name)
	g.markers.apply(name, &s)
	def.schema, def.deps = s, slices.Sorted(maps.Keys(refs))
	return name
}

// selfDescribed is the definition of a type that declares its OpenAPI type
// and format (metav1.Time, ...): in v3 a oneOf when it declares one
// (intstr.IntOrString, resource.Quantity), with the v2 form apart.
func selfDescribed(t reflect.Type, desc string, types []string, format string) (spec.Schema, *spec.Schema) {
	v2 := spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, Type: types, Format: format}}
	oneOf, ok := reflect.Zero(t).Interface().(interface{ OpenAPIV3OneOfTypes() []string })
	if !ok {
		return v2, nil
	}
	v3 := spec.Schema{SchemaProps: spec.SchemaProps{
		Description: desc,
		OneOf:       common.GenerateOpenAPIV3OneOfSchema(oneOf.OpenAPIV3OneOfTypes()),
		Format:      format,
	}}
	return v3, &v2
}

// defineUpstream takes upstream's definition of name and of its
// dependencies; false when upstream has none.
func (g *generator) defineUpstream(name string) bool {
	if _, ok := g.defs[name]; ok {
		return true
	}
	u, ok := g.upstream[name]
	if !ok {
		return false
	}
	def := &definition{schema: u.Schema, deps: slices.Sorted(slices.Values(u.Dependencies))}
	if v2, ok := u.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
		def.v2 = &v2
		def.schema.Extensions = maps.Clone(u.Schema.Extensions)
		delete(def.schema.Extensions, common.ExtensionV2Schema)
		if len(def.schema.Extensions) == 0 {
			def.schema.Extensions = nil
		}
	}
	g.defs[name] = def
	for _, d := range def.deps {
		g.defineUpstream(d)
	}
	return true
}

// members adds the properties of t's fields to s (inlining embedded
// structs as encoding/json does) and returns the required ones: those
// whose json tag lacks omitempty. owner is the model the properties
// belong to.
func (g *generator) members(t reflect.Type, owner string, s *spec.Schema, refs map[string]bool) []string {
	var required []string
	doc := swaggerDoc(t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		if f.Anonymous && hasTag && (tag == "" || strings.HasPrefix(tag, ",")) {
			required = append(required, g.members(deref(f.Type), owner, s, refs)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		opts := strings.Split(tag, ",")
		name := opts[0]
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omitempty := slices.Contains(opts[1:], "omitempty")
		if !omitempty {
			required = append(required, name)
		}
		s.SetProperty(name, g.property(f, name, opts[1:], omitempty, owner, doc[name], refs))
	}
	return required
}

// property returns the schema of one field.
func (g *generator) property(f reflect.StructField, name string, opts []string, omitempty bool, owner, desc string, refs map[string]bool) spec.Schema {
	if slices.Contains(opts, "string") {
		return spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, Type: []string{"string"}}}
	}
	s := g.value(f.Type, refs)
	s.Description = desc
	smdField, known := g.smd.field(owner, name)
	switch {
	case known:
		s.Default = smdField.Default
		s.Extensions = fieldExtensions(smdField)
	case !g.smd.knows(owner):
		s.Default = enforcedDefault(f.Type, omitempty)
	}
	if v := f.Tag.Get("patchStrategy"); v != "" {
		s.AddExtension("x-kubernetes-patch-strategy", v)
	}
	if v := f.Tag.Get("patchMergeKey"); v != "" {
		s.AddExtension("x-kubernetes-patch-merge-key", v)
	}
	return s
}

// value returns the schema of a value of type t: a simple type, a ref, an
// array or a map.
func (g *generator) value(t reflect.Type, refs map[string]bool) spec.Schema {
	t = deref(t)
	if typ, format, ok := simpleTypeFormat(t); ok {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{typ}, Format: format}}
	}
	switch t.Kind() {
	case reflect.Struct:
		name := g.define(t)
		refs[name] = true
		return spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(v3RefPrefix + name)}}
	case reflect.Map:
		elem := g.value(t.Elem(), refs)
		return spec.Schema{SchemaProps: spec.SchemaProps{
			Type:                 []string{"object"},
			AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &elem},
		}}
	case reflect.Slice, reflect.Array:
		elem := g.value(t.Elem(), refs)
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &elem}}}
	}
	return spec.Schema{} // interfaces: any value
}

// simpleTypeFormat maps a non-struct Go type to an OpenAPI type and format
// as openapi-gen does ([]byte is a base64 string).
func simpleTypeFormat(t reflect.Type) (string, string, bool) {
	if (t.Kind() == reflect.Slice) && t.Elem().Kind() == reflect.Uint8 {
		return "string", "byte", true
	}
	typ, format := common.OpenAPITypeFormat(t.Kind().String())
	return typ, format, typ != ""
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// enforcedDefault is openapi-gen's default for a field the structured-merge
// schemas do not describe: {} for a struct value, the zero value of a
// scalar without omitempty, nothing for pointers, collections and types
// that unmarshal themselves.
func enforcedDefault(t reflect.Type, omitempty bool) any {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Array, reflect.Interface:
		return nil
	case reflect.Struct:
		if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
			return nil
		}
		if t.NumField() == 1 && t.Field(0).Anonymous {
			return enforcedDefault(t.Field(0).Type, omitempty)
		}
		return map[string]any{}
	}
	if omitempty {
		return nil
	}
	zero, _ := common.OpenAPIZeroValue(t.Kind().String())
	return zero
}

// customTypeFormat returns the type and format a type declares for itself
// (metav1.Time, resource.Quantity, intstr.IntOrString, ...).
func customTypeFormat(t reflect.Type) ([]string, string, bool) {
	v, ok := reflect.Zero(t).Interface().(interface {
		OpenAPISchemaType() []string
		OpenAPISchemaFormat() string
	})
	if !ok {
		return nil, "", false
	}
	return v.OpenAPISchemaType(), v.OpenAPISchemaFormat(), true
}

// modelName is the definition name upstream gives t:
// io.k8s.api.core.v1.Pod, io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.
func modelName(t reflect.Type) string {
	type namer interface{ OpenAPIModelName() string }
	if n, ok := reflect.Zero(t).Interface().(namer); ok {
		return n.OpenAPIModelName()
	}
	if n, ok := reflect.New(t).Interface().(namer); ok {
		return n.OpenAPIModelName()
	}
	return util.ToRESTFriendlyName(t.PkgPath() + "." + t.Name())
}

// swaggerDoc returns t's descriptions: "" for the type, json names for its
// fields.
func swaggerDoc(t reflect.Type) map[string]string {
	type documented interface{ SwaggerDoc() map[string]string }
	if d, ok := reflect.Zero(t).Interface().(documented); ok {
		return d.SwaggerDoc()
	}
	if d, ok := reflect.New(t).Interface().(documented); ok {
		return d.SwaggerDoc()
	}
	return nil
}

// extraDocs describes the types that have no SwaggerDoc method, as upstream
// does.
var extraDocs = map[string]string{
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.",
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
