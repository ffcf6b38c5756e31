package webhooks

import (
	"encoding/json"
	"sort"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
)

// patchAnnotation is the value of a hook's patch audit annotation: the
// patch, as the JSON patch library decoded it, encoded by encoding/json as
// upstream does (operation keys sorted, values as received, compacted).
func patchAnnotation(h *hook, patch jsonpatch.Patch) (string, bool) {
	if b, ok := appendPlainPatchAnnotation(nil, h, patch); ok {
		return string(b), true
	}
	return genericPatchAnnotation(h, patch)
}

// genericPatchAnnotation encodes the annotation as upstream's
// jsonPatchAnnotationValue does; it handles every patch.
func genericPatchAnnotation(h *hook, patch jsonpatch.Patch) (string, bool) {
	v, err := json.Marshal(patchAuditAnnotation{h.Config, h.Name, patch, string(admissionv1.PatchTypeJSONPatch)})
	if err != nil {
		return "", false
	}
	return string(v), true
}

// patchAuditAnnotation is upstream's PatchAuditAnnotation.
type patchAuditAnnotation struct {
	Configuration string `json:"configuration"`
	Webhook       string `json:"webhook"`
	Patch         any    `json:"patch,omitempty"`
	PatchType     string `json:"patchType,omitempty"`
}

// appendPlainPatchAnnotation writes the annotation straight from the
// decoded operations when every value is one that encoding/json writes
// byte for byte as it is (see plainJSONValue).
// ok is false for any other patch.
func appendPlainPatchAnnotation(b []byte, h *hook, patch jsonpatch.Patch) ([]byte, bool) {
	if len(patch) == 0 {
		return nil, false
	}
	b = append(b, `{"configuration":`...)
	b = appendJSONString(b, h.Config)
	b = append(b, `,"webhook":`...)
	b = appendJSONString(b, h.Name)
	b = append(b, `,"patch":[`...)
	var keys []string
	for i, op := range patch {
		if op == nil {
			return nil, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		keys = sortedOperationKeys(op, keys[:0])
		b = append(b, '{')
		for j, k := range keys {
			v := op[k]
			if v != nil && !plainJSONValue(*v) {
				return nil, false
			}
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			if v == nil {
				b = append(b, "null"...)
			} else {
				b = append(b, *v...)
			}
		}
		b = append(b, '}')
	}
	b = append(b, `],"patchType":"`+string(admissionv1.PatchTypeJSONPatch)+`"}`...)
	return b, true
}

// sortedOperationKeys lists an operation's keys in encoding/json's map
// order (sorted bytewise).
func sortedOperationKeys(op jsonpatch.Operation, keys []string) []string {
	for k := range op {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// plainJSONValue reports whether encoding/json writes a raw JSON value
// (a json.RawMessage, as the decoded patch holds them) as it is: it only
// compacts the value and escapes <, >, & and U+2028/U+2029 in it, so a
// value with no whitespace outside its strings and none of those
// characters comes out byte for byte. v is valid JSON (it was decoded).
func plainJSONValue(v []byte) bool {
	inString, escaped := false, false
	for i, c := range v {
		switch {
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(v) && v[i+1] == 0x80 && (v[i+2] == 0xA8 || v[i+2] == 0xA9):
			return false
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}
