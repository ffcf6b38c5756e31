package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// apiModelPrefix starts the model names of the k8s.io/api types; the
// marker table leaves it out.
const apiModelPrefix = "io.k8s.api."

// MarkerTable is what upstream's openapi-gen reads from the comments of
// the k8s.io/api types and reflection cannot see, per model: enum values,
// +required and +optional, unions, list and map markers where the
// structured-merge schemas disagree, and descriptions SwaggerDoc renders
// otherwise. markerData (zz_generated_markers.go) is its JSON form, with
// one- or two-letter keys as it is compiled into the binary, written by
// test/upstream/openapimarkers from kube-apiserver 1.37.2's definitions;
// it is decoded when the first document is built, not at start-up.
type MarkerTable struct {
	// Enums are the +enum types: each value with its constant's comment
	// ("" when none), in the order upstream lists them.
	Enums [][][2]string `json:"e"`
	// Models are keyed by model name without "io.k8s.api.".
	Models map[string]ModelMarkers `json:"m"`
}

// ModelMarkers are one model's markers.
type ModelMarkers struct {
	// Required replaces the list the omitempty rule gives (empty: none).
	Required *[]string `json:"r,omitempty"`
	// Unions is the model's x-kubernetes-unions.
	Unions []any `json:"u,omitempty"`
	// Properties are keyed by json name.
	Properties map[string]PropertyMarkers `json:"p,omitempty"`
}

// PropertyMarkers are one property's markers.
type PropertyMarkers struct {
	// Enum, ItemsEnum and ValuesEnum are indexes in Enums: the values of
	// the property, of its items (a list of enums) or of its values (a map
	// to enums).
	Enum       *int `json:"e,omitempty"`
	ItemsEnum  *int `json:"ie,omitempty"`
	ValuesEnum *int `json:"ve,omitempty"`
	// Description replaces the SwaggerDoc description where openapi-gen
	// reads the comment otherwise (tables, escapes).
	Description *string `json:"d,omitempty"`
	// EnumDocBreaks, when set, appends the "Possible enum values" text of
	// the property's enum to the description after that many newlines.
	EnumDocBreaks *int `json:"b,omitempty"`
	// Extensions are set on the property; a nil value removes one
	// (x-kubernetes-list-type where the structured-merge schemas disagree
	// with upstream's markers).
	Extensions map[string]any `json:"x,omitempty"`
}

// enum is the index of the enum the property's description lists.
func (pm PropertyMarkers) enum() *int {
	switch {
	case pm.Enum != nil:
		return pm.Enum
	case pm.ItemsEnum != nil:
		return pm.ItemsEnum
	}
	return pm.ValuesEnum
}

// loadMarkers decodes markerData once per process: the table is only
// read after that, by every document builder (v2 and v3 each build one).
var loadMarkers = sync.OnceValue(func() *MarkerTable {
	t := &MarkerTable{}
	if err := json.Unmarshal([]byte(markerData), t); err != nil {
		panic(fmt.Sprintf("openapi: decoding the marker table: %v", err)) // generated data: a test catches it
	}
	return t
})

// apply adds a model's markers to its reflected schema.
func (t *MarkerTable) apply(model string, s *spec.Schema) {
	if t == nil {
		return
	}
	name, ok := strings.CutPrefix(model, apiModelPrefix)
	if !ok {
		return
	}
	m, ok := t.Models[name]
	if !ok {
		return
	}
	if m.Required != nil {
		s.Required = slices.Clone(*m.Required)
		if len(s.Required) == 0 {
			s.Required = nil
		}
	}
	if m.Unions != nil {
		s.AddExtension("x-kubernetes-unions", m.Unions)
	}
	for prop, pm := range m.Properties {
		p, ok := s.Properties[prop]
		if !ok {
			continue
		}
		t.applyProperty(pm, &p)
		s.Properties[prop] = p
	}
}

func (t *MarkerTable) applyProperty(pm PropertyMarkers, p *spec.Schema) {
	if pm.Enum != nil {
		p.Enum = t.values(*pm.Enum)
	}
	if pm.ItemsEnum != nil && p.Items != nil && p.Items.Schema != nil {
		items := *p.Items.Schema
		items.Enum = t.values(*pm.ItemsEnum)
		p.Items = &spec.SchemaOrArray{Schema: &items}
	}
	if pm.ValuesEnum != nil && p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil {
		values := *p.AdditionalProperties.Schema
		values.Enum = t.values(*pm.ValuesEnum)
		p.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: &values}
	}
	if pm.Description != nil {
		p.Description = *pm.Description
	}
	if e := pm.enum(); e != nil && pm.EnumDocBreaks != nil {
		p.Description += strings.Repeat("\n", *pm.EnumDocBreaks) + EnumDoc(t.Enums[*e])
	}
	if len(pm.Extensions) > 0 {
		p.Extensions = maps.Clone(p.Extensions)
		for k, v := range pm.Extensions {
			if v == nil {
				delete(p.Extensions, k)
			} else {
				p.AddExtension(k, v)
			}
		}
		if len(p.Extensions) == 0 {
			p.Extensions = nil
		}
	}
}

func (t *MarkerTable) values(enum int) []any {
	out := make([]any, len(t.Enums[enum]))
	for i, v := range t.Enums[enum] {
		out[i] = v[0]
	}
	return out
}

// EnumDoc is the text upstream appends to the description of an enum
// property: a header, then one line per value with its comment.
func EnumDoc(values [][2]string) string {
	var b strings.Builder
	b.WriteString("Possible enum values:")
	for _, v := range values {
		fmt.Fprintf(&b, "\n - `%q`", v[0])
		if v[1] != "" {
			b.WriteString(" " + v[1])
		}
	}
	return b.String()
}
