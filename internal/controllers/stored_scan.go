package controllers

import (
	"bytes"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/types"
	sigsjson "sigs.k8s.io/json"

	"github.com/admitd/admitd/pkg/jsonscan"
)

// scanStored reads the fields of stored without decoding the rest of value
// (data, spec, managedFields): following every write, the controllers
// would otherwise spend more on skipping those than on anything else.
// value is JSON the server encoded. ok is false, and the caller decodes the
// whole value instead, on anything this does not read exactly as the
// case-sensitive decoder would: escaped keys, a field's key met twice, or
// JSON it cannot follow. Keys match exactly, as for upstream's metadata
// informers: a custom resource may keep a top-level "Metadata" of its own.
func scanStored(value []byte, s *stored) (ok bool) {
	// seen has a bit per field read: a key met twice (which the decoder
	// decodes over the first value, reusing its slices' elements) is left
	// to it.
	var seen uint
	once := func(bit uint) bool {
		if seen&(1<<bit) != 0 {
			return false
		}
		seen |= 1 << bit
		return true
	}
	return members(value, func(key, raw []byte) bool {
		switch string(key) {
		case "metadata":
			return once(0) && members(raw, func(key, raw []byte) bool {
				i := fieldIndex(key, metadataFields)
				return i < 0 || once(uint(2+i)) && decodeValue(raw, metadataTarget(&s.Metadata, i))
			})
		case "status":
			return once(1) && members(raw, func(key, raw []byte) bool {
				return string(key) != "phase" || once(10) && decodeValue(raw, &s.Status.Phase)
			})
		}
		return true
	})
}

// decodeValue decodes raw into target as the decoder does; plain strings
// (no escapes, valid UTF-8), most of what is read, without it.
func decodeValue(raw []byte, target any) bool {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		switch t := target.(type) {
		case *string:
			*t = string(raw[1 : n-1])
			return true
		case *types.UID:
			*t = types.UID(raw[1 : n-1])
			return true
		}
	}
	return sigsjson.UnmarshalCaseSensitivePreserveInts(raw, target) == nil
}

var metadataFields = []string{"name", "namespace", "uid", "ownerReferences", "finalizers", "deletionTimestamp"}

// fieldIndex is the index of the field key names, or -1.
func fieldIndex(key []byte, fields []string) int {
	for i, f := range fields {
		if string(key) == f {
			return i
		}
	}
	return -1
}

func metadataTarget(m *storedMetadata, i int) any {
	switch metadataFields[i] {
	case "name":
		return &m.Name
	case "namespace":
		return &m.Namespace
	case "uid":
		return &m.UID
	case "ownerReferences":
		return &m.OwnerReferences
	case "finalizers":
		return &m.Finalizers
	default:
		return &m.DeletionTimestamp
	}
}

// members calls fn with each key (as written, escapes left in) and raw
// value of the JSON object value; it stops and returns false when fn does,
// or when value is not an object it can follow. null is an object without
// members, as encoding/json treats it for a struct.
func members(value []byte, fn func(key, raw []byte) bool) bool {
	i := jsonscan.Space(value, 0)
	if bytes.HasPrefix(value[i:], []byte("null")) && jsonscan.Space(value, i+4) == len(value) {
		return true
	}
	end, ok := jsonscan.Object(value, i, func(m jsonscan.Member) bool {
		return bytes.IndexByte(m.Key, '\\') < 0 && fn(m.Key, value[m.ValueStart:m.ValueEnd])
	})
	return ok && jsonscan.Space(value, end) == len(value)
}
