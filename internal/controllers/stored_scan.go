package controllers

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/types"
)

// scanStored reads the fields of stored without decoding the rest of value
// (data, spec, managedFields): following every write, the controllers
// would otherwise spend more on skipping those than on anything else.
// value is JSON the server encoded. ok is false, and the caller decodes the
// whole value instead, on anything this does not read exactly as
// encoding/json would: escaped keys, keys that match a field only without
// regard to case, or JSON it cannot follow.
func scanStored(value []byte, s *stored) (ok bool) {
	// seen has a bit per field read: a key met twice (which encoding/json
	// decodes over the first value, reusing its slices' elements) is left
	// to encoding/json.
	var seen uint
	once := func(bit uint) bool {
		if seen&(1<<bit) != 0 {
			return false
		}
		seen |= 1 << bit
		return true
	}
	return members(value, func(key, raw []byte) bool {
		switch {
		case string(key) == "metadata":
			return once(0) && members(raw, func(key, raw []byte) bool {
				i := fieldIndex(key, metadataFields)
				switch {
				case i < 0:
					return true
				case string(key) != metadataFields[i]: // matches only regardless of case
					return false
				}
				return once(uint(2+i)) && decodeValue(raw, metadataTarget(&s.Metadata, i))
			})
		case string(key) == "status":
			return once(1) && members(raw, func(key, raw []byte) bool {
				if string(key) == "phase" {
					return once(10) && decodeValue(raw, &s.Status.Phase)
				}
				return !bytes.EqualFold(key, []byte("phase"))
			})
		default:
			return !bytes.EqualFold(key, []byte("metadata")) && !bytes.EqualFold(key, []byte("status"))
		}
	})
}

// decodeValue decodes raw into target as encoding/json does; plain strings
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
	return json.Unmarshal(raw, target) == nil
}

var metadataFields = []string{"name", "namespace", "uid", "ownerReferences", "finalizers", "deletionTimestamp"}

// fieldIndex is the index of the field key names regardless of case, or -1.
func fieldIndex(key []byte, fields []string) int {
	for i, f := range fields {
		if bytes.EqualFold(key, []byte(f)) {
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

// members calls fn with each key (raw, unescaped only if it has no escapes)
// and raw value of the JSON object value; it stops and returns false when
// fn does, or when value is not an object it can follow. null is an object
// without members, as encoding/json treats it for a struct.
func members(value []byte, fn func(key, raw []byte) bool) bool {
	i := skipSpace(value, 0)
	if bytes.HasPrefix(value[i:], []byte("null")) && skipSpace(value, i+4) == len(value) {
		return true
	}
	if i >= len(value) || value[i] != '{' {
		return false
	}
	i = skipSpace(value, i+1)
	if i < len(value) && value[i] == '}' {
		return skipSpace(value, i+1) == len(value)
	}
	for i < len(value) {
		keyEnd, ok := skipString(value, i)
		if !ok {
			return false
		}
		key := value[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(value, keyEnd)
		if i >= len(value) || value[i] != ':' {
			return false
		}
		start := skipSpace(value, i+1)
		end, ok := skipValue(value, start)
		if !ok || !fn(key, value[start:end]) {
			return false
		}
		i = skipSpace(value, end)
		if i >= len(value) {
			return false
		}
		switch value[i] {
		case ',':
			i = skipSpace(value, i+1)
		case '}':
			return skipSpace(value, i+1) == len(value)
		default:
			return false
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i].
func skipString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for from := i + 1; ; {
		j := bytes.IndexByte(b[from:], '"')
		if j < 0 {
			return 0, false
		}
		quote := from + j
		escapes := 0
		for k := quote - 1; k > i && b[k] == '\\'; k-- {
			escapes++
		}
		if escapes%2 == 0 {
			return quote + 1, true
		}
		from = quote + 1
	}
}

// skipValue returns the index after the value starting at b[i]. Strings
// are followed exactly; objects and arrays by their brackets.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	default:
		j := i
		for j < len(b) && !bytes.ContainsRune([]byte(",}] \t\n\r"), rune(b[j])) {
			j++
		}
		return j, j > i
	}
}
