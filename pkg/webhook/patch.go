package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// CreatePatch returns the RFC 6902 JSON patch that turns the JSON object
// original into the JSON object modified, `[]` when they are equal.
//
// Objects are compared key by key and recursed into. Arrays of the same length
// are compared index by index; an array that only grows at its end gets
// `add …/-` operations, one that only shrinks at its end gets `remove`
// operations from the last index down; any other change of length replaces
// the whole array. Keys are escaped as JSON pointers require (`~` as `~0`, `/`
// as `~1`); a changed value under the empty key is replaced whole, because
// json-patch v5 misreads paths through an empty key. Numbers are compared by
// their text, so `1` → `1.0` is a (harmless) replace. The patch applies with
// both json-patch v4, which kube-apiserver uses, and v5.
func CreatePatch(original, modified []byte) ([]byte, error) {
	ops, err := diffJSON(original, modified)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return []byte("[]"), nil
	}
	return marshalOps(ops)
}

// operation is one JSON patch operation. Value is raw JSON, absent for
// remove and present (possibly `null`) for add and replace.
type operation struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

func marshalOps(ops []operation) ([]byte, error) {
	return json.Marshal(ops)
}

// diffJSON decodes both documents and returns the operations between them.
func diffJSON(original, modified []byte) ([]operation, error) {
	a, err := decodeJSON(original)
	if err != nil {
		return nil, fmt.Errorf("decoding the original object: %w", err)
	}
	b, err := decodeJSON(modified)
	if err != nil {
		return nil, fmt.Errorf("decoding the modified object: %w", err)
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		return nil, errors.New("a patch is computed between two JSON objects")
	}
	d := differ{}
	d.objects("", am, bm)
	return d.ops, d.err
}

// decodeJSON decodes exactly one JSON value, keeping numbers as their text.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// differ accumulates operations; err is the first value that failed to
// encode (it cannot happen for decoded JSON, but is not ignored).
type differ struct {
	ops []operation
	err error
}

func (d *differ) add(op, path string, value any) {
	var raw json.RawMessage
	if op != "remove" {
		var err error
		if raw, err = json.Marshal(value); err != nil && d.err == nil {
			d.err = err
		}
	}
	d.ops = append(d.ops, operation{Op: op, Path: path, Value: raw})
}

func (d *differ) value(path string, a, b any) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			d.objects(path, av, bv)
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			d.arrays(path, av, bv)
			return
		}
	default:
		if a == b { // nil, bool, string or json.Number
			return
		}
	}
	d.add("replace", path, b)
}

func (d *differ) objects(path string, a, b map[string]any) {
	for _, k := range sortedKeys(a) {
		p := path + "/" + escapePointer(k)
		bv, ok := b[k]
		switch {
		case ok && k == "":
			// json-patch v5 reads an empty reference token in the middle of
			// a path as the document itself, so never path through one.
			if !reflect.DeepEqual(a[k], bv) {
				d.add("replace", p, bv)
			}
		case ok:
			d.value(p, a[k], bv)
		default:
			d.add("remove", p, nil)
		}
	}
	for _, k := range sortedKeys(b) {
		if _, ok := a[k]; !ok {
			d.add("add", path+"/"+escapePointer(k), b[k])
		}
	}
}

func (d *differ) arrays(path string, a, b []any) {
	switch {
	case len(a) == len(b):
		for i := range a {
			d.value(path+"/"+strconv.Itoa(i), a[i], b[i])
		}
	case len(a) < len(b) && reflect.DeepEqual(a, b[:len(a)]):
		for _, v := range b[len(a):] {
			d.add("add", path+"/-", v)
		}
	case len(a) > len(b) && reflect.DeepEqual(a[:len(b)], b):
		for i := len(a) - 1; i >= len(b); i-- {
			d.add("remove", path+"/"+strconv.Itoa(i), nil)
		}
	default:
		d.add("replace", path, b)
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// escapePointer escapes a key for use as a JSON pointer reference token
// (RFC 6901 §3).
func escapePointer(key string) string {
	return pointerEscaper.Replace(key)
}

// toJSON returns v as JSON: raw bytes as they are, anything else marshalled.
func toJSON(v any) ([]byte, error) {
	switch t := v.(type) {
	case []byte:
		return t, nil
	case json.RawMessage:
		return t, nil
	}
	return json.Marshal(v)
}
