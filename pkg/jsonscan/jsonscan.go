// Package jsonscan finds values in JSON text without decoding it: the
// offsets of an object's members and an array's elements, so that a caller
// can read or splice one value of a large document. It follows valid JSON
// (strings exactly, objects and arrays by their brackets); it does not
// validate what it skips.
package jsonscan

import "bytes"

// Space returns the index of the first byte at or after i that is not
// JSON whitespace.
func Space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// String returns the index after the string that starts at b[i].
func String(b []byte, i int) (int, bool) {
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

// Value returns the index after the value that starts at b[i].
func Value(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return String(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, ok := String(b, i)
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
		for j < len(b) && !isDelimiter(b[j]) {
			j++
		}
		return j, j > i
	}
}

func isDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// Member is one member of an object: Key is its key as written between the
// quotes (escapes left in), Start the offset of the key's opening quote,
// and the value spans [ValueStart, ValueEnd).
type Member struct {
	Key                  []byte
	Start                int
	ValueStart, ValueEnd int
}

// Object calls fn with each member of the object that starts at b[i] and
// returns the index after the object. It stops, returning false, when fn
// does or when it cannot follow the text.
func Object(b []byte, i int, fn func(Member) bool) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		keyEnd, ok := String(b, i)
		if !ok {
			return 0, false
		}
		m := Member{Key: b[i+1 : keyEnd-1], Start: i}
		i = Space(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		m.ValueStart = Space(b, i+1)
		if m.ValueEnd, ok = Value(b, m.ValueStart); !ok || !fn(m) {
			return 0, false
		}
		if i = Space(b, m.ValueEnd); i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = Space(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// Array calls fn with the span of each element of the array that starts at
// b[i] and returns the index after the array. It stops, returning false,
// when fn does or when it cannot follow the text.
func Array(b []byte, i int, fn func(start, end int) bool) (int, bool) {
	if i >= len(b) || b[i] != '[' {
		return 0, false
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		end, ok := Value(b, i)
		if !ok || !fn(i, end) {
			return 0, false
		}
		if i = Space(b, end); i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = Space(b, i+1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}
