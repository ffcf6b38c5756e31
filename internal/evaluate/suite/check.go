package suite

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/util/jsonpath"

	"github.com/admitd/admitd/internal/evaluate"
)

// Check returns the expectations of e that r does not meet, in words.
func Check(e Expect, r *evaluate.Result) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if e.Allowed != nil && *e.Allowed != r.Allowed {
		add("allowed: got %v, want %v%s", r.Allowed, *e.Allowed, because(r))
	}
	if e.Decision != "" && e.Decision != r.Decision {
		add("decision: got %s, want %s%s", r.Decision, e.Decision, because(r))
	}
	code, message := int32(0), ""
	if r.Status != nil {
		code, message = r.Status.Code, r.Status.Message
	}
	if e.Code != 0 && e.Code != code {
		add("code: got %d, want %d", code, e.Code)
	}
	if e.Message != "" && !strings.Contains(message, e.Message) {
		add("message: got %q, want it to contain %q", message, e.Message)
	}
	if e.ExactMessage != "" && e.ExactMessage != message {
		add("message: got %q, want %q", message, e.ExactMessage)
	}
	out = append(out, checkObject(e, r.Object)...)
	out = append(out, checkWarnings(e, r.Warnings)...)
	for _, k := range sortedKeys(e.AuditAnnotations) {
		got, ok := r.AuditAnnotations[k]
		switch {
		case !ok:
			add("audit annotation %s: missing, want %q", k, e.AuditAnnotations[k])
		case got != e.AuditAnnotations[k]:
			add("audit annotation %s: got %q, want %q", k, got, e.AuditAnnotations[k])
		}
	}
	return out
}

func because(r *evaluate.Result) string {
	if r.Status != nil && r.Status.Message != "" {
		return " (" + r.Status.Message + ")"
	}
	return ""
}

func checkObject(e Expect, obj map[string]any) []string {
	if e.Object == nil && len(e.Fields) == 0 {
		return nil
	}
	if obj == nil {
		return []string{"object: there is no final object (the request was refused, or is a DELETE)"}
	}
	var out []string
	if e.Object != nil {
		if diff := contains("", normal(obj), normal(e.Object)); diff != "" {
			out = append(out, "object: "+diff)
		}
	}
	for _, path := range sortedKeys(e.Fields) {
		if msg := checkField(obj, path, e.Fields[path]); msg != "" {
			out = append(out, msg)
		}
	}
	return out
}

func checkField(obj map[string]any, path string, want any) string {
	expr := path
	if !strings.HasPrefix(expr, "{") {
		expr = "{" + expr + "}"
	}
	jp := jsonpath.New("field")
	if err := jp.Parse(expr); err != nil {
		return fmt.Sprintf("field %s: not a JSONPath: %v", path, err)
	}
	results, err := jp.FindResults(obj)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return fmt.Sprintf("field %s: missing, want %s", path, compact(want))
	}
	var got any = results[0][0].Interface()
	if len(results[0]) > 1 {
		var all []any
		for _, v := range results[0] {
			all = append(all, v.Interface())
		}
		got = all
	}
	if !reflect.DeepEqual(normal(got), normal(want)) {
		return fmt.Sprintf("field %s: got %s, want %s", path, compact(got), compact(want))
	}
	return ""
}

// contains reports how got fails to contain want ("" when it does).
func contains(path string, got, want any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %s, want an object", orRoot(path), compact(got))
		}
		for _, k := range sortedKeys(w) {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s: missing, want %s", path+"."+k, compact(w[k]))
			}
			if d := contains(path+"."+k, gv, w[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %s, want %d items like %s", orRoot(path), compact(got), len(w), compact(w))
		}
		for i := range w {
			if d := contains(path+"["+strconv.Itoa(i)+"]", g[i], w[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("%s: got %s, want %s", orRoot(path), compact(got), compact(want))
	}
	return ""
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

func checkWarnings(e Expect, warnings []string) []string {
	var out []string
	if e.NoWarnings && len(warnings) > 0 {
		out = append(out, fmt.Sprintf("warnings: got %q, want none", warnings))
	}
	for _, w := range e.Warnings {
		if !slices.ContainsFunc(warnings, func(got string) bool { return strings.Contains(got, w) }) {
			out = append(out, fmt.Sprintf("warnings: none contains %q (got %q)", w, warnings))
		}
	}
	return out
}

// normal is v through JSON: numbers become float64, whatever YAML or the
// server gave.
func normal(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func deepCopy(m map[string]any) map[string]any {
	out, _ := normal(m).(map[string]any)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func itoa(i int) string { return strconv.Itoa(i) }
