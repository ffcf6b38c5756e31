package evaluate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// serverSet are the metadata fields every stored object gets; the diff
// leaves them out.
var serverSet = []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"}

// ObjectDiff lists the fields that differ between before and after, as
// "+ field: value" (added), "- field: value" (removed) and
// "~ field: old -> new" (changed), sorted by field; lists are compared by
// index. Server-set metadata is left out.
func ObjectDiff(before, after map[string]any) []string {
	var out []string
	diffValue("", withoutServerSet(before), withoutServerSet(after), &out)
	slices.Sort(out)
	return out
}

func withoutServerSet(m map[string]any) map[string]any {
	md, ok := m["metadata"].(map[string]any)
	if !ok {
		return m
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	cmd := make(map[string]any, len(md))
	for k, v := range md {
		if !slices.Contains(serverSet, k) {
			cmd[k] = v
		}
	}
	c["metadata"] = cmd
	return c
}

func diffValue(path string, a, b any, out *[]string) {
	am, aMap := a.(map[string]any)
	bm, bMap := b.(map[string]any)
	if aMap && bMap {
		diffMaps(path, am, bm, out)
		return
	}
	al, aList := a.([]any)
	bl, bList := b.([]any)
	if aList && bList {
		diffLists(path, al, bl, out)
		return
	}
	if ja, jb := compact(a), compact(b); ja != jb {
		*out = append(*out, fmt.Sprintf("~ %s: %s -> %s", path, ja, jb))
	}
}

func diffMaps(path string, a, b map[string]any, out *[]string) {
	for k, av := range a {
		bv, ok := b[k]
		if !ok {
			*out = append(*out, fmt.Sprintf("- %s: %s", join(path, k), compact(av)))
			continue
		}
		diffValue(join(path, k), av, bv, out)
	}
	for k, bv := range b {
		if _, ok := a[k]; !ok {
			*out = append(*out, fmt.Sprintf("+ %s: %s", join(path, k), compact(bv)))
		}
	}
}

func diffLists(path string, a, b []any, out *[]string) {
	for i := 0; i < max(len(a), len(b)); i++ {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case i >= len(a):
			*out = append(*out, fmt.Sprintf("+ %s: %s", p, compact(b[i])))
		case i >= len(b):
			*out = append(*out, fmt.Sprintf("- %s: %s", p, compact(a[i])))
		default:
			diffValue(p, a[i], b[i], out)
		}
	}
}

func join(path, key string) string {
	if strings.ContainsAny(key, ".[]") {
		key = "[" + key + "]"
		return path + key
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
