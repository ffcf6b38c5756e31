package registry

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// internalJSON renders a v1 value as kube-apiserver shows it in an error:
// as the JSON of upstream's internal type, which has the same fields in
// the same order but no JSON tags, so every field of an API struct shows
// under its Go name, empty or not, and an embedded one's fields inline
// (flowcontrol's, storage's CSINodeDriver, resource.k8s.io's specs); maps,
// and types that are not of k8s.io/api (metadata, quantities, raw
// extensions), render as their own JSON. The one difference of shape is a
// limited priority level's nominalConcurrencyShares, a plain int32
// internally (0 when unset).
func internalJSON(v any) json.RawMessage {
	var b bytes.Buffer
	writeInternalJSON(&b, reflect.ValueOf(v))
	return b.Bytes()
}

var limitedType = reflect.TypeFor[flowcontrolv1.LimitedPriorityLevelConfiguration]()

func writeInternalJSON(b *bytes.Buffer, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
	}
	switch {
	case v.Kind() == reflect.Pointer:
		writeInternalJSON(b, v.Elem())
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Uint8:
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeInternalJSON(b, v.Index(i))
		}
		b.WriteByte(']')
	case v.Kind() == reflect.Map:
		writeInternalMap(b, v)
	case v.Kind() == reflect.Struct && strings.HasPrefix(v.Type().PkgPath(), "k8s.io/api/"):
		b.WriteByte('{')
		writeInternalFields(b, v, true)
		b.WriteByte('}')
	default:
		data, err := json.Marshal(v.Interface())
		if err != nil {
			data = []byte("null")
		}
		b.Write(data)
	}
}

// writeInternalFields writes a struct's fields under their Go names, an
// embedded struct's inline; first says no field was written yet. It
// reports whether it wrote none.
func writeInternalFields(b *bytes.Buffer, v reflect.Value, first bool) bool {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Anonymous {
			first = writeEmbedded(b, v.Field(i), first)
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(strconv.Quote(f.Name) + ":")
		if v.Type() == limitedType && f.Name == "NominalConcurrencyShares" {
			b.WriteString(strconv.FormatInt(int64(derefInt32(v.Field(i).Interface().(*int32))), 10))
			continue
		}
		writeInternalJSON(b, v.Field(i))
	}
	return first
}

// writeEmbedded writes an embedded struct's fields inline: an API
// struct's under their Go names, another's (metadata) as its own JSON.
func writeEmbedded(b *bytes.Buffer, v reflect.Value, first bool) bool {
	if strings.HasPrefix(v.Type().PkgPath(), "k8s.io/api/") {
		return writeInternalFields(b, v, first)
	}
	data, err := json.Marshal(v.Interface())
	if err != nil || len(data) <= 2 || data[0] != '{' {
		return first
	}
	if !first {
		b.WriteByte(',')
	}
	b.Write(data[1 : len(data)-1])
	return false
}

// writeInternalMap writes a map with its keys in order, as encoding/json.
func writeInternalMap(b *bytes.Buffer, v reflect.Value) {
	keys := v.MapKeys()
	slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k.String()) + ":")
		writeInternalJSON(b, v.MapIndex(k))
	}
	b.WriteByte('}')
}
