package webhooks

import (
	"encoding/json"
	"sort"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
)

// patchAnnotation is the value of a hook's patch audit annotation: the
// patch as encoding/json writes it once decoded into generic values (keys
// sorted, values normalized). raw is the patch as received, patch the same
// bytes decoded by the JSON patch library.
func patchAnnotation(h *Hook, raw []byte, patch jsonpatch.Patch) (string, bool) {
	if b, ok := appendPlainPatchAnnotation(nil, h, patch); ok {
		return string(b), true
	}
	return genericPatchAnnotation(h, raw)
}

// genericPatchAnnotation decodes the patch into generic values and
// encodes the annotation from them; it handles every patch.
func genericPatchAnnotation(h *Hook, raw []byte) (string, bool) {
	var ops []map[string]any
	if err := json.Unmarshal(raw, &ops); err != nil {
		return "", false
	}
	v, err := json.Marshal(struct {
		Configuration string           `json:"configuration"`
		Webhook       string           `json:"webhook"`
		Patch         []map[string]any `json:"patch"`
		PatchType     string           `json:"patchType"`
	}{h.Config, h.Name, ops, string(admissionv1.PatchTypeJSONPatch)})
	if err != nil {
		return "", false
	}
	return string(v), true
}

// appendPlainPatchAnnotation writes the annotation straight from the
// decoded operations when every value is one that a decode into generic
// values and re-encode leaves byte for byte as it is: null, true, false or
// a string without escapes. ok is false for any other patch.
func appendPlainPatchAnnotation(b []byte, h *Hook, patch jsonpatch.Patch) ([]byte, bool) {
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

// plainJSONValue reports whether a raw JSON value re-encodes to the same
// bytes after decoding into an interface value.
func plainJSONValue(v []byte) bool {
	switch string(v) {
	case "null", "true", "false":
		return true
	}
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	return plainJSONString(string(v[1 : len(v)-1]))
}
