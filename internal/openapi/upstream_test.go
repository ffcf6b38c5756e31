package openapi

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/admitd/admitd/internal/registry"
)

// knownDifferences are where reflection cannot see what openapi-gen reads
// from comments (+required, +default) and the marker table does not say
// it, as the served documents take upstream's output for autoscaling/v1:
// "model.property.key".
var knownDifferences = map[string]bool{
	"io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler.required": true, // +required on an omitempty field
	"io.k8s.api.autoscaling.v1.ScaleSpec.replicas.default":       true, // structured-merge schema lacks the default
}

// TestReflectionMatchesOpenAPIGen compares the reflected schemas of the
// k8s.io/api types that upstream's generated definitions also cover
// (autoscaling/v1, shipped by apiextensions-apiserver) with those.
func TestReflectionMatchesOpenAPIGen(t *testing.T) {
	upstream := generatedopenapi.GetOpenAPIDefinitions(func(name string) spec.Ref { return spec.MustCreateRef(v3RefPrefix + name) })
	g := newGenerator(loadSMD(registry.Scheme()), nil, loadMarkers())
	g.define(reflect.TypeFor[autoscalingv1.HorizontalPodAutoscaler]())
	g.define(reflect.TypeFor[autoscalingv1.Scale]())
	var names []string
	for name := range g.defs {
		if _, ok := upstream[name]; ok && strings.HasPrefix(name, "io.k8s.api.") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) < 5 {
		t.Fatalf("compared %d definitions, want at least 5", len(names))
	}
	t.Logf("compared %d definitions", len(names))
	for _, name := range names {
		got, want := asMap(t, g.defs[name].schema), asMap(t, upstream[name].Schema)
		for _, diff := range diffMaps(name, got, want) {
			if !knownDifferences[diff] {
				t.Errorf("%s differs from openapi-gen:\n got  %s\n want %s", diff, pick(got, diff, name), pick(want, diff, name))
			}
		}
	}
}

func asMap(t *testing.T, s spec.Schema) map[string]any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// diffMaps lists the keys that differ, as "model.key" at the top and
// "model.property.key" for properties.
func diffMaps(name string, got, want map[string]any) []string {
	var out []string
	gp, _ := got["properties"].(map[string]any)
	wp, _ := want["properties"].(map[string]any)
	for _, k := range union(got, want) {
		if k != "properties" && !reflect.DeepEqual(got[k], want[k]) {
			out = append(out, name+"."+k)
		}
	}
	for _, p := range union(gp, wp) {
		g, _ := gp[p].(map[string]any)
		w, _ := wp[p].(map[string]any)
		for _, k := range union(g, w) {
			if !reflect.DeepEqual(g[k], w[k]) {
				out = append(out, name+"."+p+"."+k)
			}
		}
	}
	return out
}

func union(a, b map[string]any) []string {
	set := maps.Clone(a)
	if set == nil {
		set = map[string]any{}
	}
	maps.Copy(set, b)
	return slices.Sorted(maps.Keys(set))
}

func pick(m map[string]any, diff, name string) string {
	path := strings.Split(strings.TrimPrefix(diff, name+"."), ".")
	var v any = m
	for i, p := range path {
		mm, _ := v.(map[string]any)
		if i == 0 && len(path) == 2 {
			mm, _ = mm["properties"].(map[string]any)
		}
		v = mm[p]
	}
	b, _ := json.Marshal(v)
	return string(b)
}
