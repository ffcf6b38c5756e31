package trace

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// patchBetween returns a JSON patch that turns the document before into
// the one after: objects are compared key by key, arrays of the same length
// element by element, anything else that differs is replaced whole. It is
// how a trace shows a change made without a JSON patch (a
// MutatingAdmissionPolicy's apply configuration). nil when a document does
// not parse or nothing changed.
func patchBetween(before, after []byte) []byte {
	var b, a any
	if json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil {
		return nil
	}
	var ops []patchOp
	ops = diffValues("", b, a, ops)
	if len(ops) == 0 {
		return nil
	}
	out, err := json.Marshal(ops)
	if err != nil {
		return nil
	}
	return out
}

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

func diffValues(path string, before, after any, ops []patchOp) []patchOp {
	switch b := before.(type) {
	case map[string]any:
		if a, ok := after.(map[string]any); ok {
			return diffObjects(path, b, a, ops)
		}
	case []any:
		if a, ok := after.([]any); ok && len(a) == len(b) {
			for i := range b {
				ops = diffValues(path+"/"+strconv.Itoa(i), b[i], a[i], ops)
			}
			return ops
		}
	}
	if reflect.DeepEqual(before, after) {
		return ops
	}
	return append(ops, patchOp{Op: "replace", Path: path, Value: jsonValue{after}})
}

func diffObjects(path string, before, after map[string]any, ops []patchOp) []patchOp {
	for _, k := range sortedKeys(before) {
		if _, ok := after[k]; !ok {
			ops = append(ops, patchOp{Op: "remove", Path: path + "/" + escapePointer(k)})
		}
	}
	for _, k := range sortedKeys(after) {
		b, ok := before[k]
		if !ok {
			ops = append(ops, patchOp{Op: "add", Path: path + "/" + escapePointer(k), Value: jsonValue{after[k]}})
			continue
		}
		ops = diffValues(path+"/"+escapePointer(k), b, after[k], ops)
	}
	return ops
}

// jsonValue keeps a null value in the patch (omitempty would drop a nil
// interface but not a struct).
type jsonValue struct{ v any }

func (j jsonValue) MarshalJSON() ([]byte, error) { return json.Marshal(j.v) }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
