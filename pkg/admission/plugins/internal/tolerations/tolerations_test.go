package tolerations

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func seconds(s int64) *int64 { return &s }

// The named tolerations of upstream's table (pkg/util/tolerations).
var named = map[string]corev1.Toleration{
	"all":               {Operator: corev1.TolerationOpExists},
	"all-nosched":       {Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	"all-noexec":        {Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	"foo":               {Key: "foo", Operator: corev1.TolerationOpExists},
	"foo-bar":           {Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar"},
	"foo-nosched":       {Key: "foo", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	"foo-bar-nosched":   {Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule},
	"foo-baz-nosched":   {Key: "foo", Operator: corev1.TolerationOpEqual, Value: "baz", Effect: corev1.TaintEffectNoSchedule},
	"faz-nosched":       {Key: "faz", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	"faz-baz-nosched":   {Key: "faz", Operator: corev1.TolerationOpEqual, Value: "baz", Effect: corev1.TaintEffectNoSchedule},
	"foo-prefnosched":   {Key: "foo", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectPreferNoSchedule},
	"foo-noexec":        {Key: "foo", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	"foo-bar-noexec":    {Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoExecute},
	"foo-noexec-10":     {Key: "foo", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds(10)},
	"foo-noexec-0":      {Key: "foo", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds(0)},
	"foo-bar-noexec-10": {Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds(10)},
}

func list(names ...string) []corev1.Toleration {
	var out []corev1.Toleration
	for _, n := range names {
		out = append(out, named[n])
	}
	return out
}

func TestCovers(t *testing.T) {
	covered := map[string][]string{
		"all":             {"all-nosched", "all-noexec", "foo", "foo-bar", "foo-nosched", "foo-bar-nosched", "foo-baz-nosched", "faz-nosched", "faz-baz-nosched", "foo-prefnosched", "foo-noexec", "foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"},
		"all-nosched":     {"foo-nosched", "foo-bar-nosched", "foo-baz-nosched", "faz-nosched", "faz-baz-nosched"},
		"all-noexec":      {"foo-noexec", "foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"},
		"foo":             {"foo-bar", "foo-nosched", "foo-bar-nosched", "foo-baz-nosched", "foo-prefnosched", "foo-noexec", "foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"},
		"foo-bar":         {"foo-bar-nosched", "foo-bar-noexec", "foo-bar-noexec-10"},
		"foo-nosched":     {"foo-bar-nosched", "foo-baz-nosched"},
		"faz-nosched":     {"faz-baz-nosched"},
		"foo-noexec":      {"foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"},
		"foo-bar-noexec":  {"foo-bar-noexec-10"},
		"foo-noexec-10":   {"foo-noexec-0", "foo-bar-noexec-10"},
		"foo-bar-nosched": nil, "faz-baz-nosched": nil, "foo-prefnosched": nil, "foo-noexec-0": nil, "foo-bar-noexec-10": nil,
	}
	for super, subs := range covered {
		for sub := range named {
			want := sub == super || slices.Contains(subs, sub)
			if got := Covers(named[super], named[sub]); got != want {
				t.Errorf("Covers(%s, %s) = %v, want %v", super, sub, got, want)
			}
		}
	}
	lt := corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpLt, Value: "5"}
	if Covers(lt, named["foo-bar"]) || !Covers(lt, lt) {
		t.Errorf("Covers with operator Lt: want only itself")
	}
}

func TestAllowed(t *testing.T) {
	for _, tc := range []struct {
		name             string
		input, whitelist []string
		want             bool
	}{
		{"equal input and whitelist", []string{"foo-bar-nosched", "foo-baz-nosched"}, []string{"foo-bar-nosched", "foo-baz-nosched"}, true},
		{"duplicate input allowed", []string{"foo-bar-nosched", "foo-bar-nosched"}, []string{"foo-bar-nosched", "foo-baz-nosched"}, true},
		{"allow all", []string{"foo-bar-nosched", "foo-bar-nosched"}, []string{"all"}, true},
		{"duplicate input forbidden", []string{"foo-bar-nosched", "foo-bar-nosched"}, []string{"foo-baz-nosched"}, false},
		{"value mismatch", []string{"foo-bar-nosched", "foo-baz-nosched"}, []string{"foo-baz-nosched"}, false},
		{"input does not exist in whitelist", []string{"foo-bar-nosched"}, []string{"foo-baz-nosched"}, false},
		{"disjoint sets", []string{"foo-bar"}, []string{"foo-nosched"}, false},
		{"empty whitelist", []string{"foo-bar"}, nil, true},
		{"empty input", nil, []string{"foo-bar"}, true},
	} {
		if got := Allowed(list(tc.input...), list(tc.whitelist...)); got != tc.want {
			t.Errorf("%s: Allowed(%v, %v) = %v, want %v", tc.name, tc.input, tc.whitelist, got, tc.want)
		}
	}
}

func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a, b, want []string
	}{
		{"disjoint", []string{"foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"}, []string{"foo-prefnosched", "foo-baz-nosched"},
			[]string{"foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10", "foo-prefnosched", "foo-baz-nosched"}},
		{"duplicate", []string{"foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"}, []string{"foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"},
			[]string{"foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"}},
		{"merge redundant", []string{"foo-bar-nosched", "foo-baz-nosched"}, []string{"foo-nosched", "faz-baz-nosched"}, []string{"foo-nosched", "faz-baz-nosched"}},
		{"merge all", []string{"foo-bar-nosched", "foo-baz-nosched", "foo-noexec-10"}, []string{"all"}, []string{"all"}},
		{"merge into all", []string{"all"}, []string{"foo-bar-nosched", "foo-baz-nosched", "foo-noexec-10"}, []string{"all"}},
		{"both empty", nil, nil, nil},
	} {
		a := list(tc.a...)
		before := slices.Clone(a)
		if got := Merge(a, list(tc.b...)); !reflect.DeepEqual(got, list(tc.want...)) {
			t.Errorf("%s: Merge = %v, want %v", tc.name, got, list(tc.want...))
		}
		if !reflect.DeepEqual(a, before) {
			t.Errorf("%s: Merge modified its first argument", tc.name)
		}
	}
}
