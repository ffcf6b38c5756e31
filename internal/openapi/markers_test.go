package openapi

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/admitd/admitd/internal/registry"
)

// TestMarkerTableFitsReflection checks that every entry of the marker
// table names a model reflection generates, and properties (with items or
// values for their enums) it has, and enums that exist: apply skips what
// it does not find, so a table out of step with the types would silently
// do nothing.
func TestMarkerTableFitsReflection(t *testing.T) {
	table := loadMarkers()
	if len(table.Models) < 100 || len(table.Enums) < 50 {
		t.Fatalf("the table has %d models and %d enums, want at least 100 and 50", len(table.Models), len(table.Enums))
	}
	reflected := ReflectedDefinitions()
	inRange := func(i *int) bool { return i == nil || (*i >= 0 && *i < len(table.Enums)) }
	for name, m := range table.Models {
		s, ok := reflected[apiModelPrefix+name]
		if !ok {
			t.Errorf("the table names %s, which no document refers to", name)
			continue
		}
		for prop, pm := range m.Properties {
			p, ok := s.Properties[prop]
			switch {
			case !ok:
				t.Errorf("%s has no property %s", name, prop)
			case !inRange(pm.Enum) || !inRange(pm.ItemsEnum) || !inRange(pm.ValuesEnum):
				t.Errorf("%s.%s names an enum out of range", name, prop)
			case pm.ItemsEnum != nil && (p.Items == nil || p.Items.Schema == nil):
				t.Errorf("%s.%s has an items enum but no items", name, prop)
			case pm.ValuesEnum != nil && (p.AdditionalProperties == nil || p.AdditionalProperties.Schema == nil):
				t.Errorf("%s.%s has a values enum but no values", name, prop)
			case pm.EnumDocBreaks != nil && pm.enum() == nil:
				t.Errorf("%s.%s appends the text of no enum", name, prop)
			}
		}
	}
}

// TestMarkersApplied checks a few markers in the generated definitions:
// an enum with its text, a +required field that has omitempty and a
// +optional one that has not.
func TestMarkersApplied(t *testing.T) {
	g := newGenerator(loadSMD(registry.Scheme()), nil, loadMarkers())
	g.define(reflect.TypeFor[corev1.Pod]())
	g.define(reflect.TypeFor[appsv1.StatefulSet]())
	pull := g.defs["io.k8s.api.core.v1.Container"].schema.Properties["imagePullPolicy"]
	if want := []any{"Always", "IfNotPresent", "Never"}; !reflect.DeepEqual(pull.Enum, want) {
		t.Errorf("Container.imagePullPolicy enum = %v, want %v", pull.Enum, want)
	}
	if !strings.Contains(pull.Description, "https://kubernetes.io/docs/concepts/containers/images#updating-images\n\nPossible enum values:\n - `\"Always\"` means that kubelet always attempts") {
		t.Errorf("Container.imagePullPolicy description lacks the enum text: %q", pull.Description)
	}
	if req := g.defs["io.k8s.api.apps.v1.StatefulSet"].schema.Required; !slices.Contains(req, "spec") {
		t.Errorf("StatefulSet required = %v, want spec (+required on an omitempty field)", req)
	}
	if req := g.defs["io.k8s.api.apps.v1.StatefulSetSpec"].schema.Required; slices.Contains(req, "serviceName") {
		t.Errorf("StatefulSetSpec required = %v, want no serviceName (+optional without omitempty)", req)
	}
	if u := g.defs["io.k8s.api.core.v1.SeccompProfile"].schema.Extensions["x-kubernetes-unions"]; u == nil {
		t.Error("SeccompProfile has no x-kubernetes-unions")
	}
}
