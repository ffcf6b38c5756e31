package apiserver

import (
	"bytes"
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/jsonscan"
)

// Which string values a create's recorded fields depend on.
//
// A create records each field of the object that the empty object lacks
// or holds with another value: the field manager compares the two
// (structured-merge-diff's Compare; its Update records Added and
// Modified), and nothing else in its Update reads a value. Outside arrays
// the comparison goes member by member, and a scalar, or an atomic map
// (an empty RoleBinding's roleRef is {apiGroup: "", kind: "", name: ""}),
// counts as modified when it is not equal to the empty object's. So a
// string reached from the root through objects alone matters only by
// whether it equals the empty object's value at its path: a string where
// the empty object holds none differs whatever it is, and one where it
// holds "" matters only by being "" or not. The key of createdFields
// writes every other string as "x" (as "y" where the empty object holds
// "x"), keeps "" as "" everywhere, and keeps the top level's apiVersion
// and kind, everything inside arrays (list keys, set members), object
// keys, numbers, booleans and null as they are.

// stringPaths is a tree of the object-member paths at which an empty
// object's JSON holds a string. A nil *stringPaths has none.
type stringPaths struct {
	empty   []byte // the empty object's string here, as JSON (quotes included); nil if none
	keep    bool   // strings here are kept as they are
	members map[string]*stringPaths
}

// member is the subtree of the member named key (as written in JSON,
// escapes left in).
func (p *stringPaths) member(key []byte) *stringPaths {
	if p == nil {
		return nil
	}
	return p.members[string(key)]
}

// blanked is what the key writes for str, a string at p's path, as JSON
// (quotes included): str itself when it is "", equal to the empty
// object's string there or to be kept; otherwise "x", or "y" where the
// empty object holds "x".
func (p *stringPaths) blanked(str []byte) []byte {
	switch {
	case len(str) == len(`""`):
		return str
	case p == nil:
		return blankString
	case p.keep || bytes.Equal(str, p.empty):
		return str
	case bytes.Equal(p.empty, blankString):
		return otherBlankString
	}
	return blankString
}

var blankString, otherBlankString = []byte(`"x"`), []byte(`"y"`)

// stringPathsOf returns where empty's JSON holds strings, with apiVersion
// and kind kept at the top level (the field manager checks the version).
func stringPathsOf(empty runtime.Object) (*stringPaths, bool) {
	data, err := json.Marshal(empty)
	if err != nil {
		return nil, false
	}
	i := jsonscan.Space(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	root, ok := stringPathsIn(data, i)
	if !ok {
		return nil, false
	}
	if root == nil {
		root = &stringPaths{members: map[string]*stringPaths{}}
	}
	root.members["apiVersion"] = &stringPaths{keep: true}
	root.members["kind"] = &stringPaths{keep: true}
	return root, true
}

// stringPathsIn returns the string paths of the value at data[i]: nil
// when it holds no string outside arrays.
func stringPathsIn(data []byte, i int) (*stringPaths, bool) {
	if i >= len(data) {
		return nil, false
	}
	switch data[i] {
	case '"':
		end, ok := jsonscan.String(data, i)
		return &stringPaths{empty: data[i:end:end]}, ok
	case '{':
		members := map[string]*stringPaths{}
		_, ok := jsonscan.Object(data, i, func(m jsonscan.Member) bool {
			sub, ok := stringPathsIn(data, m.ValueStart)
			if sub != nil {
				members[string(m.Key)] = sub
			}
			return ok
		})
		if len(members) == 0 {
			return nil, ok
		}
		return &stringPaths{members: members}, ok
	default:
		_, ok := jsonscan.Value(data, i)
		return nil, ok
	}
}

// blankStrings blanks data's strings outside arrays, as
// stringPaths.blanked says (empty: the empty object's strings), in place,
// and returns what is left of data. data is an object's JSON. ok is false
// when the text cannot be followed.
func blankStrings(data []byte, empty *stringPaths) (_ []byte, ok bool) {
	w := stringBlanker{data: data}
	i := jsonscan.Space(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	if _, ok := w.object(i, empty); !ok {
		return nil, false
	}
	return w.data[:w.move(len(w.data))], true
}

// stringBlanker blanks strings in one pass over data, moving the text
// between them back over what blanking saved: a blank is never longer
// than the non-empty string it replaces.
type stringBlanker struct {
	data  []byte
	read  int // data[read:] is as it was
	wrote int // data[:wrote] is the result so far
}

// move moves data[read:to] to the end of the result; it returns the
// result's length.
func (w *stringBlanker) move(to int) int {
	w.wrote += copy(w.data[w.wrote:], w.data[w.read:to])
	w.read = to
	return w.wrote
}

// object blanks the members of the object at data[i] and returns the
// index after it.
func (w *stringBlanker) object(i int, empty *stringPaths) (int, bool) {
	b := w.data
	i = jsonscan.Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		keyEnd, ok := jsonscan.String(b, i)
		if !ok {
			return 0, false
		}
		at := empty.member(b[i+1 : keyEnd-1])
		if i = jsonscan.Space(b, keyEnd); i >= len(b) || b[i] != ':' {
			return 0, false
		}
		if i, ok = w.value(jsonscan.Space(b, i+1), at); !ok {
			return 0, false
		}
		if i = jsonscan.Space(b, i); i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = jsonscan.Space(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// value blanks the value at data[i] and returns the index after it:
// objects member by member, a string as stringPaths.blanked says,
// anything else (arrays included) left as it is.
func (w *stringBlanker) value(i int, empty *stringPaths) (int, bool) {
	if i >= len(w.data) {
		return 0, false
	}
	switch w.data[i] {
	case '{':
		return w.object(i, empty)
	case '"':
		end, ok := jsonscan.String(w.data, i)
		if !ok {
			return 0, false
		}
		str := w.data[i:end]
		if blank := empty.blanked(str); !bytes.Equal(blank, str) {
			w.move(i)
			w.wrote += copy(w.data[w.wrote:], blank)
			w.read = end
		}
		return end, true
	default:
		return jsonscan.Value(w.data, i)
	}
}
