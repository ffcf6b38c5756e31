package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// jsonListItems are the text of the items array of a JSON List document
// (a kind ending in "List", an apiVersion, items an array), found without
// decoding the document; ok is false for any other document, which is
// then decoded whole. text is one valid JSON value.
func jsonListItems(text []byte) (items []byte, ok bool) {
	i := skipSpace(text, 0)
	if i >= len(text) || text[i] != '{' {
		return nil, false
	}
	var kind, apiVersion any
	for i = skipSpace(text, i+1); i < len(text) && text[i] == '"'; i = skipSpace(text, i+1) {
		keyEnd := skipJSON(text, i)
		var key string
		if keyEnd < 0 || json.Unmarshal(text[i:keyEnd], &key) != nil {
			return nil, false
		}
		start := skipSpace(text, skipSpace(text, keyEnd)+1) // past the colon
		end := skipJSON(text, start)
		if end < 0 {
			return nil, false
		}
		switch key {
		case "kind":
			kind = nil
			_ = json.Unmarshal(text[start:end], &kind)
		case "apiVersion":
			apiVersion = nil
			_ = json.Unmarshal(text[start:end], &apiVersion)
		case "items":
			items = text[start:end]
		}
		if i = skipSpace(text, end); i >= len(text) || text[i] != ',' {
			break
		}
	}
	k, _ := kind.(string)
	v, _ := apiVersion.(string)
	return items, strings.HasSuffix(k, "List") && v != "" && len(items) > 0 && items[0] == '['
}

func skipSpace(text []byte, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n') {
		i++
	}
	return i
}

// skipJSON is the end of the valid JSON value at text[i:], or -1.
func skipJSON(text []byte, i int) int {
	if i >= len(text) {
		return -1
	}
	depth := 0
	for ; i < len(text); i++ {
		switch c := text[i]; {
		case c == '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
			if i >= len(text) {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return i // the end of a scalar
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case depth == 0 && (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\r' || c == '\n'):
			return i
		}
	}
	if depth != 0 {
		return -1
	}
	return i
}

// eachJSONItem decodes the items of a JSON array one at a time.
func eachJSONItem(items []byte, source string, add func(*unstructured.Unstructured, string) error) error {
	dec := json.NewDecoder(bytes.NewReader(items))
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%s: items: %w", source, err)
	}
	for i := 0; dec.More(); i++ {
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s: items[%d]: %w", source, i, err)
		}
		if err := item(v, source, i, add); err != nil {
			return err
		}
	}
	return nil
}

// yamlList is where the items of a List document in block style (as
// kubectl writes it) are: each entry's "-" at the same indentation.
type yamlList struct {
	// indent is the entries' indentation.
	indent int
	// entries are the offsets of the entries' "-".
	entries []int
	// end is the offset of the end of the items.
	end int
}

// topLevelKey is a plain key at the start of a line, and what follows it.
var topLevelKey = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]*):(?:[ \t]+(.*))?$`)

// scanYAMLList finds the items of a YAML List document: at the top level a
// block mapping of plain keys without repeats, kind (ending in "List") and
// apiVersion with their values on their lines, and items a block sequence.
// ok is false for any other document (or any doubt), which is then decoded
// whole.
func scanYAMLList(text []byte) (l yamlList, ok bool) {
	if otherLineBreaks(text) {
		return yamlList{}, false
	}
	s := listScan{seen: map[string]bool{}, list: yamlList{indent: -1}}
	for off := 0; off < len(text); {
		end := len(text)
		if nl := bytes.IndexByte(text[off:], '\n'); nl >= 0 {
			end = off + nl + 1
		}
		if !s.line(text, off, end) {
			return yamlList{}, false
		}
		off = end
	}
	if s.inItems {
		s.list.end = len(text)
	}
	return s.list, strings.HasSuffix(s.kind, "List") && s.apiVersion != "" && len(s.list.entries) > 0
}

// otherLineBreaks reports whether text breaks lines otherwise than with
// "\n" or "\r\n", as YAML may (a lone "\r", NEL, LS, PS).
func otherLineBreaks(text []byte) bool {
	for i, b := range text {
		if b == '\r' && (i+1 == len(text) || text[i+1] != '\n') {
			return true
		}
	}
	return bytes.Contains(text, []byte("\u0085")) || bytes.Contains(text, []byte("\u2028")) || bytes.Contains(text, []byte("\u2029"))
}

type listScan struct {
	seen             map[string]bool
	key              string // the top-level key whose value the lines are
	inItems          bool
	kind, apiVersion string
	list             yamlList
}

// line reads the line text[off:end]; false when the document is not a
// List this scan understands.
func (s *listScan) line(text []byte, off, end int) bool {
	content := bytes.TrimRight(text[off:end], "\r\n")
	trimmed := bytes.TrimLeft(content, " ")
	indent := len(content) - len(trimmed)
	if len(trimmed) == 0 || trimmed[0] == '#' {
		return true
	}
	if trimmed[0] == '\t' {
		return false
	}
	entry := trimmed[0] == '-' && (len(trimmed) == 1 || trimmed[1] == ' ')
	if s.inItems {
		switch {
		case s.list.indent < 0 && entry:
			s.list.indent = indent
			fallthrough
		case indent == s.list.indent && entry:
			s.list.entries = append(s.list.entries, off+indent)
			return true
		case s.list.indent >= 0 && indent > s.list.indent:
			return true
		case indent > 0:
			return false
		}
		s.inItems, s.list.end = false, off
	}
	if indent > 0 {
		// a block value: not that of kind or apiVersion
		return s.key != "kind" && s.key != "apiVersion" && s.key != "items"
	}
	m := topLevelKey.FindSubmatch(content)
	if m == nil || s.seen[string(m[1])] {
		return false
	}
	s.key = string(m[1])
	s.seen[s.key] = true
	value := bytes.TrimSpace(m[2])
	switch s.key {
	case "items":
		s.inItems = len(value) == 0 || value[0] == '#'
		return s.inItems
	case "kind", "apiVersion":
		var v map[string]any
		if yaml.Unmarshal(content, &v) != nil {
			return false
		}
		str, _ := v[s.key].(string)
		if s.key == "kind" {
			s.kind = str
		} else {
			s.apiVersion = str
		}
	}
	return true
}

// each decodes the items one at a time: each entry without its "-", as a
// document of its own.
func (l yamlList) each(text []byte, source string, add func(*unstructured.Unstructured, string) error) error {
	var buf []byte
	for i, at := range l.entries {
		end := l.end
		if i+1 < len(l.entries) {
			end = l.entries[i+1] - l.indent
		}
		buf = append(append(buf[:0], bytes.Repeat([]byte{' '}, l.indent+1)...), text[at+1:end]...)
		var v any
		if err := yaml.Unmarshal(buf, &v); err != nil {
			return fmt.Errorf("%s: items[%d]: %w", source, i, err)
		}
		if err := item(v, source, i, add); err != nil {
			return err
		}
	}
	return nil
}
