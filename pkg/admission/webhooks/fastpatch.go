package webhooks

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/admitd/admitd/pkg/jsonscan"
)

// spliceJSONPatch applies patch to doc, a JSON object, and writes what
// json-patch v4 (which upstream applies) writes, without v4's decoding of
// every level it touches into maps of lazily decoded nodes. Like v4 it
// writes each level the patch walks again, its keys sorted and its values
// as encoding/json writes a json.RawMessage (compacted, HTML-escaped); the
// text is v4's byte for byte, which matters for fields that keep their raw
// JSON (FieldsV1, RawExtension, apiextensions JSON).
//
// It handles add, replace and remove through object members and array
// indices, the patches webhooks send. For anything else (another op, an
// escaped, non-UTF-8 or repeated key on the way, a path or index v4 reads
// its own way, any step that would fail) ok is false and the caller
// applies the patch with v4, for its result or its error.
func spliceJSONPatch(doc []byte, patch jsonpatch.Patch) (out []byte, ok bool) {
	if len(patch) == 0 || !json.Valid(doc) {
		return nil, false // v4 still writes the document again, or fails on it
	}
	for _, op := range patch {
		if doc, ok = applyOp(doc, op); !ok {
			return nil, false
		}
	}
	return doc, true
}

func applyOp(doc []byte, op jsonpatch.Operation) ([]byte, bool) {
	kind, ok := plainString(op["op"])
	if !ok || kind != "add" && kind != "replace" && kind != "remove" {
		return nil, false
	}
	path, ok := plainString(op["path"])
	if !ok || !strings.HasPrefix(path, "/") {
		return nil, false
	}
	var err error
	value := []byte("null") // v4 writes a missing or null value as null
	if raw := op["value"]; raw != nil {
		value = *raw
	}
	if value, err = json.Marshal(json.RawMessage(value)); err != nil {
		return nil, false
	}
	segments := strings.Split(path[1:], "/")
	for i, s := range segments {
		segments[i] = pointerUnescaper.Replace(s)
	}
	start := jsonscan.Space(doc, 0)
	end, ok := jsonscan.Value(doc, start)
	if !ok || doc[start] != '{' || jsonscan.Space(doc, end) != len(doc) {
		return nil, false // v4 fails on a document that is not an object
	}
	return rewrite(doc[start:end], segments, kind, value)
}

// plainString is a JSON string without escapes, as op.Kind and op.Path
// would decode it; ok is false for anything else (left to v4).
func plainString(raw *json.RawMessage) (string, bool) {
	if raw == nil {
		return "", false
	}
	v := *raw
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

// pointerUnescaper decodes a JSON pointer segment as v4 does (RFC 6901).
var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// rewrite applies the operation at segs below v, an object or array, and
// writes v as v4 writes a level it walked.
func rewrite(v []byte, segs []string, kind string, value []byte) ([]byte, bool) {
	if v[0] == '{' {
		return rewriteObject(v, segs, kind, value)
	}
	return rewriteArray(v, segs, kind, value)
}

// member is one member of an object; compact marks a value this wrote
// (already as encoding/json writes it).
type member struct {
	key, value []byte
	compact    bool
}

func rewriteObject(v []byte, segs []string, kind string, value []byte) ([]byte, bool) {
	members, ok := objectMembers(v)
	if !ok {
		return nil, false
	}
	i := slices.IndexFunc(members, func(m member) bool { return string(m.key) == segs[0] })
	switch {
	case len(segs) > 1:
		if i < 0 || !container(members[i].value) {
			return nil, false
		}
		if members[i].value, ok = rewrite(members[i].value, segs[1:], kind, value); !ok {
			return nil, false
		}
		members[i].compact = true
	case kind == "remove":
		if i < 0 {
			return nil, false
		}
		members = slices.Delete(members, i, i+1)
	case i >= 0: // add and replace set an existing member
		members[i] = member{members[i].key, value, true}
	case !plainKey(segs[0]): // v4's replace of a missing key adds it too
		return nil, false
	default:
		members = append(members, member{[]byte(segs[0]), value, true})
	}
	return writeMembers(members, len(v)+len(value))
}

func rewriteArray(v []byte, segs []string, kind string, value []byte) ([]byte, bool) {
	var elems [][]byte
	if _, ok := jsonscan.Array(v, 0, func(s, e int) bool { elems = append(elems, v[s:e]); return true }); !ok {
		return nil, false
	}
	idx, isIndex := arrayIndex(segs[0])
	switch {
	case len(segs) > 1:
		if !isIndex || idx >= len(elems) || !container(elems[idx]) {
			return nil, false
		}
		var ok bool
		if elems[idx], ok = rewrite(elems[idx], segs[1:], kind, value); !ok {
			return nil, false
		}
	case kind == "add" && (segs[0] == "-" || isIndex && idx == len(elems)):
		elems = append(elems, value)
	case !isIndex || idx >= len(elems):
		return nil, false
	case kind == "add":
		elems = slices.Insert(elems, idx, value)
	case kind == "replace":
		elems[idx] = value
	default: // remove
		elems = slices.Delete(elems, idx, idx+1)
	}
	out := make([]byte, 1, len(v)+len(value)+16)
	out[0] = '['
	for i, e := range elems {
		if i > 0 {
			out = append(out, ',')
		}
		var ok bool
		if out, ok = appendCompact(out, e); !ok {
			return nil, false
		}
	}
	return append(out, ']'), true
}

// objectMembers lists the members of the object v. ok is false if a key is
// not plain or appears twice: v4 decodes the level into a map of the
// decoded keys and encodes them again, which this does not reproduce.
func objectMembers(v []byte) ([]member, bool) {
	var members []member
	_, ok := jsonscan.Object(v, 0, func(m jsonscan.Member) bool {
		if !plainMemberKey(m.Key) {
			return false
		}
		for _, prev := range members {
			if bytes.Equal(prev.key, m.Key) {
				return false
			}
		}
		members = append(members, member{key: m.Key, value: v[m.ValueStart:m.ValueEnd]})
		return true
	})
	return members, ok
}

// plainMemberKey: a key as written that decodes to itself and that
// encoding/json writes back as it is (no escapes, UTF-8, none of the
// characters it escapes).
func plainMemberKey(key []byte) bool {
	return bytes.IndexAny(key, "\\<>&") < 0 && utf8.Valid(key) &&
		!bytes.Contains(key, []byte("\u2028")) && !bytes.Contains(key, []byte("\u2029")) && !hasControl(key)
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// writeMembers writes an object as encoding/json writes a map of raw
// values: keys sorted, values compacted.
func writeMembers(members []member, size int) ([]byte, bool) {
	slices.SortFunc(members, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	out := make([]byte, 1, size+16)
	out[0] = '{'
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(append(out, '"'), m.key...), '"', ':')
		if m.compact {
			out = append(out, m.value...)
			continue
		}
		var ok bool
		if out, ok = appendCompact(out, m.value); !ok {
			return nil, false
		}
	}
	return append(out, '}'), true
}

// appendCompact appends v, valid JSON, as encoding/json writes a
// json.RawMessage: as it is when it is already compact and has nothing
// encoding/json escapes, which is what encoding/json itself wrote.
func appendCompact(out, v []byte) ([]byte, bool) {
	if compactAsIs(v) {
		return append(out, v...), true
	}
	c, err := json.Marshal(json.RawMessage(v))
	return append(out, c...), err == nil
}

// compactAsIs reports whether v has no whitespace outside strings and none
// of the characters encoding/json escapes (<, >, &, U+2028, U+2029).
func compactAsIs(v []byte) bool {
	inString := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(v) && v[i+1] == 0x80 && (v[i+2] == 0xA8 || v[i+2] == 0xA9):
			return false
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

func container(v []byte) bool { return len(v) > 0 && (v[0] == '{' || v[0] == '[') }

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

// plainKey: printable ASCII that encoding/json writes as is.
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
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
