package trace

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// redactedJSON is Redacted as a JSON string.
var redactedJSON = json.RawMessage(strconv.Quote(Redacted))

// patchAndDiff returns the patch to show (values redacted for a sensitive
// resource) and its field diff, the old values read from base when known.
func patchAndDiff(patch, base []byte, secret bool) (json.RawMessage, []FieldChange) {
	var ops []map[string]json.RawMessage
	if err := json.Unmarshal(patch, &ops); err != nil {
		if secret {
			return redactedJSON, nil
		}
		return compact(patch), nil
	}
	diff := fieldDiff(ops, base)
	if !secret {
		return compact(patch), diff
	}
	for _, op := range ops {
		if _, ok := op["value"]; ok {
			op["value"] = redactedJSON
		}
	}
	for i := range diff {
		if diff[i].Old != nil {
			diff[i].Old = redactedJSON
		}
		if diff[i].New != nil {
			diff[i].New = redactedJSON
		}
	}
	out, _ := json.Marshal(ops)
	return out, diff
}

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return json.RawMessage(strconv.Quote(string(raw)))
	}
	return b.Bytes()
}

// fieldDiff replays the patch on base op by op, reading each old value
// before the op applies; without a base (or once an op fails) old values
// are unknown.
func fieldDiff(ops []map[string]json.RawMessage, base []byte) []FieldChange {
	doc := base
	out := make([]FieldChange, 0, len(ops))
	for _, op := range ops {
		kind, path := str(op["op"]), str(op["path"])
		if kind == "test" {
			continue
		}
		c := FieldChange{Op: kind, Field: fieldPath(path)}
		if doc != nil && kind != "add" || doc != nil && kind == "add" && !strings.HasSuffix(path, "/-") {
			c.Old = lookup(doc, path)
		}
		switch kind {
		case "add", "replace":
			c.New = op["value"]
		case "move", "copy":
			if doc != nil {
				c.New = lookup(doc, str(op["from"]))
			}
			if kind == "move" {
				c.Field = fieldPath(str(op["from"])) + " -> " + c.Field
			}
		}
		out = append(out, c)
		doc = applyOne(doc, op)
	}
	return out
}

func applyOne(doc []byte, op map[string]json.RawMessage) []byte {
	if doc == nil {
		return nil
	}
	raw, err := json.Marshal([]map[string]json.RawMessage{op})
	if err != nil {
		return nil
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil
	}
	next, err := p.Apply(doc)
	if err != nil {
		return nil
	}
	return next
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// pointerSegments splits a JSON pointer into unescaped segments.
func pointerSegments(path string) []string {
	if path == "" {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs
}

// lookup returns the value at a JSON pointer, or nil when there is none.
func lookup(doc []byte, path string) json.RawMessage {
	var cur any
	if err := json.Unmarshal(doc, &cur); err != nil {
		return nil
	}
	for _, seg := range pointerSegments(path) {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[seg]
			if !ok {
				return nil
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	out, err := json.Marshal(cur)
	if err != nil {
		return nil
	}
	return out
}

// fieldPath turns a JSON pointer into the field path kubectl users read:
// /spec/containers/1/image is spec.containers[1].image, a key with dots or
// slashes is quoted (metadata.labels["app.kubernetes.io/name"]), and "-"
// (append) is [-].
func fieldPath(path string) string {
	var b strings.Builder
	for _, seg := range pointerSegments(path) {
		switch {
		case seg == "-":
			b.WriteString("[-]")
		case isIndex(seg):
			b.WriteString("[" + seg + "]")
		case strings.ContainsAny(seg, "./[]\" ") || seg == "":
			b.WriteString("[" + strconv.Quote(seg) + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		}
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
