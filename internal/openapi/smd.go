package openapi

import (
	apiextensionsac "k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// smdIndex holds the structured-merge schemas of the built-in types, by
// OpenAPI model name. They were generated from upstream's OpenAPI and so
// carry what the Go structs do not: list types and keys, atomic maps and
// structs, and field defaults.
type smdIndex map[string]*smdschema.Map

// loadSMD reads the schemas client-go (k8s.io/api and meta types) and
// apiextensions-apiserver (CustomResourceDefinition) ship for apply
// configurations. The first source wins for a type both know.
func loadSMD(scheme *runtime.Scheme) smdIndex {
	idx := smdIndex{}
	sources := []struct {
		tc  managedfields.TypeConverter
		gvk schema.GroupVersionKind
	}{
		{applyconfigurations.NewTypeConverter(scheme), schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}},
		{apiextensionsac.NewTypeConverter(scheme), schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}},
	}
	for _, src := range sources {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(src.gvk)
		tv, err := src.tc.ObjectToTyped(u)
		if err != nil {
			continue
		}
		for i := range tv.Schema().Types {
			td := &tv.Schema().Types[i]
			if _, seen := idx[td.Name]; !seen && td.Map != nil {
				idx[td.Name] = td.Map
			}
		}
	}
	return idx
}

// field returns the structured-merge description of a field of a type.
func (x smdIndex) field(typeName, field string) (*smdschema.StructField, bool) {
	m, ok := x[typeName]
	if !ok {
		return nil, false
	}
	for i := range m.Fields {
		if m.Fields[i].Name == field {
			return &m.Fields[i], true
		}
	}
	return nil, false
}

// knows reports whether the index describes typeName.
func (x smdIndex) knows(typeName string) bool {
	_, ok := x[typeName]
	return ok
}

// typeExtensions returns the definition-level extensions of typeName:
// x-kubernetes-map-type: atomic for a +structType=atomic struct.
func (x smdIndex) typeExtensions(typeName string) spec.Extensions {
	if m, ok := x[typeName]; ok && len(m.Fields) > 0 && m.ElementRelationship == smdschema.Atomic {
		return spec.Extensions{"x-kubernetes-map-type": "atomic"}
	}
	return nil
}

// fieldExtensions returns the list and map extensions of a field, as
// upstream's +listType, +listMapKey and +mapType markers produce them.
func fieldExtensions(f *smdschema.StructField) spec.Extensions {
	ext := spec.Extensions{}
	switch t := f.Type; {
	case t.Inlined.List != nil:
		l := t.Inlined.List
		switch {
		case l.ElementRelationship == smdschema.Associative && len(l.Keys) > 0:
			ext["x-kubernetes-list-type"] = "map"
			keys := make([]any, len(l.Keys))
			for i, k := range l.Keys {
				keys[i] = k
			}
			ext["x-kubernetes-list-map-keys"] = keys
		case l.ElementRelationship == smdschema.Associative:
			ext["x-kubernetes-list-type"] = "set"
		case l.ElementRelationship == smdschema.Atomic:
			ext["x-kubernetes-list-type"] = "atomic"
		}
	case t.Inlined.Map != nil && t.Inlined.Map.ElementRelationship == smdschema.Atomic:
		ext["x-kubernetes-map-type"] = "atomic"
	case t.NamedType != nil && t.ElementRelationship != nil && *t.ElementRelationship == smdschema.Atomic:
		ext["x-kubernetes-map-type"] = "atomic"
	}
	if len(ext) == 0 {
		return nil
	}
	return ext
}
