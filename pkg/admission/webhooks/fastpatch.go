package webhooks

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/admitd/admitd/internal/jsonscan"
)

// spliceJSONPatch applies patch to doc, a JSON object the server encoded,
// by splicing the patch's values into the text, where json-patch v4 (which
// upstream applies) decodes every level it touches and encodes the
// document again. It handles add, replace and remove through object
// members and array indices, the patches webhooks send; for anything else
// (another op, an escaped key, a path v4 reads its own way, any step that
// would fail) ok is false and the caller applies the patch with v4, for
// its result or its error.
//
// The result is not v4's text (v4 sorts the keys of the levels it touches)
// but decodes to the same object: it holds the same members with the same
// values, and where a level of doc holds a key twice, decoding keeps the
// last in both.
func spliceJSONPatch(doc []byte, patch jsonpatch.Patch) (out []byte, ok bool) {
	for _, op := range patch {
		if doc, ok = spliceOp(doc, op); !ok {
			return nil, false
		}
	}
	return doc, true
}

func spliceOp(doc []byte, op jsonpatch.Operation) ([]byte, bool) {
	kind := op.Kind()
	if kind != "add" && kind != "replace" && kind != "remove" {
		return nil, false
	}
	path, err := op.Path()
	if err != nil || !strings.HasPrefix(path, "/") {
		return nil, false
	}
	value := []byte("null") // v4 writes a missing or null value as null
	if raw := op["value"]; raw != nil {
		value = *raw
	}
	segments := strings.Split(path[1:], "/")
	for i, s := range segments {
		segments[i] = pointerUnescaper.Replace(s)
	}
	start := jsonscan.Space(doc, 0)
	if start >= len(doc) || doc[start] != '{' {
		return nil, false
	}
	for _, seg := range segments[:len(segments)-1] {
		next, ok := child(doc, start, seg)
		if !ok || next >= len(doc) || doc[next] != '{' && doc[next] != '[' {
			return nil, false
		}
		start = next
	}
	last := segments[len(segments)-1]
	if doc[start] == '{' {
		return spliceMember(doc, start, last, kind, value)
	}
	return spliceElement(doc, start, last, kind, value)
}

// pointerUnescaper decodes a JSON pointer segment as v4 does (RFC 6901).
var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// child is the offset of the value under seg in the object or array at
// doc[start].
func child(doc []byte, start int, seg string) (int, bool) {
	if doc[start] == '{' {
		m, found, ok := member(doc, start, seg)
		return m.ValueStart, ok && found
	}
	idx, ok := arrayIndex(seg)
	if !ok {
		return 0, false
	}
	spans, ok := elements(doc, start)
	if !ok || idx >= len(spans) {
		return 0, false
	}
	return spans[idx][0], true
}

// member finds key in the object at doc[start]. ok is false if a key of
// the object is escaped, is not UTF-8, or appears twice: v4 decodes the level into a map,
// keeping the last of each key, where a decoder of the spliced text would
// merge a repeated object into the first.
func member(doc []byte, start int, key string) (m jsonscan.Member, found, ok bool) {
	var keys [][]byte
	_, ok = jsonscan.Object(doc, start, func(cur jsonscan.Member) bool {
		if bytes.IndexByte(cur.Key, '\\') >= 0 || !utf8.Valid(cur.Key) { // v4 would decode these
			return false
		}
		for _, k := range keys {
			if bytes.Equal(k, cur.Key) {
				return false
			}
		}
		keys = append(keys, cur.Key)
		if string(cur.Key) == key {
			m, found = cur, true
		}
		return true
	})
	return m, found, ok
}

func spliceMember(doc []byte, start int, key, kind string, value []byte) ([]byte, bool) {
	m, found, ok := member(doc, start, key)
	switch {
	case !ok:
		return nil, false
	case kind == "remove":
		if !found {
			return nil, false
		}
		return removeSpan(doc, m.Start, m.ValueEnd), true
	case found: // add and replace set an existing member
		return splice(doc, m.ValueStart, m.ValueEnd, value), true
	}
	if !plainKey(key) { // v4's replace of a missing key adds it too
		return nil, false
	}
	end, _ := jsonscan.Object(doc, start, func(jsonscan.Member) bool { return true })
	entry := append(append(append([]byte(nil), strconv.Quote(key)...), ':'), value...)
	if len(bytes.TrimSpace(doc[start+1:end-1])) == 0 {
		return splice(doc, start+1, end-1, entry), true
	}
	return splice(doc, end-1, end-1, append([]byte{','}, entry...)), true
}

func spliceElement(doc []byte, start int, seg, kind string, value []byte) ([]byte, bool) {
	spans, ok := elements(doc, start)
	if !ok {
		return nil, false
	}
	end, _ := jsonscan.Array(doc, start, func(int, int) bool { return true })
	idx, isIndex := arrayIndex(seg)
	switch {
	case kind == "add" && (seg == "-" || isIndex && idx == len(spans)):
		if len(spans) == 0 {
			return splice(doc, start+1, end-1, value), true
		}
		return splice(doc, end-1, end-1, append([]byte{','}, value...)), true
	case !isIndex || idx >= len(spans):
		return nil, false
	case kind == "add":
		return splice(doc, spans[idx][0], spans[idx][0], append(append([]byte(nil), value...), ',')), true
	case kind == "replace":
		return splice(doc, spans[idx][0], spans[idx][1], value), true
	default: // remove
		return removeSpan(doc, spans[idx][0], spans[idx][1]), true
	}
}

func elements(doc []byte, start int) ([][2]int, bool) {
	var spans [][2]int
	_, ok := jsonscan.Array(doc, start, func(s, e int) bool {
		spans = append(spans, [2]int{s, e})
		return true
	})
	return spans, ok
}

// arrayIndex reads a canonical non-negative index (v4 also takes "01",
// "+1" and negative indices; those are left to it).
func arrayIndex(seg string) (int, bool) {
	if seg == "" || len(seg) > 9 || seg[0] == '0' && len(seg) > 1 {
		return 0, false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(seg)
	return n, err == nil
}

// plainKey: printable ASCII that encoding/json writes as is, so that
// strconv.Quote writes it as encoding/json would.
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// splice returns doc with doc[from:to] replaced by text.
func splice(doc []byte, from, to int, text []byte) []byte {
	out := make([]byte, 0, len(doc)-(to-from)+len(text))
	out = append(out, doc[:from]...)
	out = append(out, text...)
	return append(out, doc[to:]...)
}

// removeSpan removes the member or element at doc[from:to] with one comma
// next to it.
func removeSpan(doc []byte, from, to int) []byte {
	if after := jsonscan.Space(doc, to); after < len(doc) && doc[after] == ',' {
		return splice(doc, from, jsonscan.Space(doc, after+1), nil)
	}
	before := from - 1
	for before >= 0 && (doc[before] == ' ' || doc[before] == '\t' || doc[before] == '\n' || doc[before] == '\r') {
		before--
	}
	if before >= 0 && doc[before] == ',' {
		return splice(doc, before, to, nil)
	}
	return splice(doc, from, to, nil)
}

// scanPatch decodes a JSON patch as jsonpatch.DecodePatch (encoding/json)
// does, for an array of objects whose keys are not escaped; ok is false for
// anything else, and for invalid JSON, which DecodePatch then reports.
func scanPatch(raw []byte) (jsonpatch.Patch, bool) {
	if !json.Valid(raw) {
		return nil, false
	}
	raw = bytes.Clone(raw) // the operations keep slices of it, as DecodePatch keeps copies
	var patch jsonpatch.Patch
	end, ok := jsonscan.Array(raw, jsonscan.Space(raw, 0), func(start, end int) bool {
		op := jsonpatch.Operation{}
		_, ok := jsonscan.Object(raw, start, func(m jsonscan.Member) bool {
			if bytes.IndexByte(m.Key, '\\') >= 0 || !utf8.Valid(m.Key) { // encoding/json would rewrite these
				return false
			}
			var value *json.RawMessage // null decodes as a nil pointer
			if v := raw[m.ValueStart:m.ValueEnd]; string(v) != "null" {
				rm := json.RawMessage(v)
				value = &rm
			}
			op[string(m.Key)] = value
			return true
		})
		patch = append(patch, op)
		return ok
	})
	if !ok || jsonscan.Space(raw, end) != len(raw) {
		return nil, false
	}
	if patch == nil {
		patch = jsonpatch.Patch{}
	}
	return patch, true
}
