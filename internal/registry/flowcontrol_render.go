package registry

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// internalJSON renders a v1 value as kube-apiserver shows it in an error:
// as the JSON of upstream's internal type, which has the same fields in
// the same order but no JSON tags, so every field shows under its Go name,
// empty or not (flowcontrol's, storage's CSINodeDriver). The one
// difference of shape is a limited priority level's
// nominalConcurrencyShares, a plain int32 internally (0 when unset).
func internalJSON(v any) json.RawMessage {
	var b bytes.Buffer
	writeInternalJSON(&b, reflect.ValueOf(v))
	return b.Bytes()
}

var limitedType = reflect.TypeFor[flowcontrolv1.LimitedPriorityLevelConfiguration]()

func writeInternalJSON(b *bytes.Buffer, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Slice:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		writeInternalJSON(b, v.Elem())
	case reflect.Slice:
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeInternalJSON(b, v.Index(i))
		}
		b.WriteByte(']')
	case reflect.Struct:
		b.WriteByte('{')
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(f.Name) + ":")
			if v.Type() == limitedType && f.Name == "NominalConcurrencyShares" {
				b.WriteString(strconv.FormatInt(int64(derefInt32(v.Field(i).Interface().(*int32))), 10))
				continue
			}
			writeInternalJSON(b, v.Field(i))
		}
		b.WriteByte('}')
	default:
		data, err := json.Marshal(v.Interface())
		if err != nil {
			data = []byte("null")
		}
		b.Write(data)
	}
}
