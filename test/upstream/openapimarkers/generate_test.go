package openapimarkers

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/admitd/admitd/internal/openapi"
)

var update = flag.Bool("update", false, "rewrite internal/openapi/zz_generated_markers.go from upstream's definitions")

const tableFile = "../../../internal/openapi/zz_generated_markers.go"

// TestMarkerTableIsCurrent derives the marker table from the differences
// between admitd's reflected definitions and upstream's, and checks that
// the checked-in file holds it.
func TestMarkerTableIsCurrent(t *testing.T) {
	table := deriveTable(t)
	src := render(t, table)
	if *update {
		if err := os.WriteFile(tableFile, src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(tableFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, src) {
		t.Errorf("%s is stale; regenerate with: go test ./openapimarkers -run TestMarkerTableIsCurrent -update", tableFile)
	}
	t.Logf("%d models, %d enum types", len(table.Models), len(table.Enums))
}

// tableBuilder collects markers, numbering enum types as they first
// appear.
type tableBuilder struct {
	t     *testing.T
	table openapi.MarkerTable
	enums map[string]int // by JSON form
}

func deriveTable(t *testing.T) *openapi.MarkerTable {
	upstream := upstreamDefinitions(v3RefPrefix)
	reflected := openapi.ReflectedDefinitions()
	tb := &tableBuilder{t: t, table: openapi.MarkerTable{Enums: [][][2]string{}, Models: map[string]openapi.ModelMarkers{}}, enums: map[string]int{}}
	for _, name := range slices.Sorted(maps.Keys(reflected)) {
		def, ok := upstream[name]
		if !ok {
			t.Errorf("upstream has no definition %s", name)
			continue
		}
		mm := tb.model(name, asMap(t, reflected[name]), asMap(t, v3Form(def)))
		if !reflect.DeepEqual(mm, openapi.ModelMarkers{}) {
			tb.table.Models[strings.TrimPrefix(name, "io.k8s.api.")] = mm
		}
	}
	return &tb.table
}

// model returns the markers that turn got (reflected) into want
// (upstream's); a difference of another kind fails the test.
func (tb *tableBuilder) model(name string, got, want map[string]any) openapi.ModelMarkers {
	var mm openapi.ModelMarkers
	for _, k := range keys(got, want) {
		if reflect.DeepEqual(got[k], want[k]) {
			continue
		}
		switch k {
		case "required":
			req := []string{}
			for _, r := range asSlice(want[k]) {
				req = append(req, r.(string))
			}
			mm.Required = &req
		case "x-kubernetes-unions":
			mm.Unions = asSlice(want[k])
		case "properties":
			mm.Properties = tb.properties(name, asObject(got[k]), asObject(want[k]))
		default:
			tb.t.Errorf("%s: %s differs and the table cannot say it:\n got  %v\n want %v", name, k, got[k], want[k])
		}
	}
	return mm
}

func (tb *tableBuilder) properties(model string, got, want map[string]any) map[string]openapi.PropertyMarkers {
	out := map[string]openapi.PropertyMarkers{}
	for _, p := range keys(got, want) {
		g, w := asObject(got[p]), asObject(want[p])
		if g == nil || w == nil {
			tb.t.Errorf("%s: property %s is on one side only", model, p)
			continue
		}
		if pm := tb.property(model+"."+p, g, w); !reflect.DeepEqual(pm, openapi.PropertyMarkers{}) {
			out[p] = pm
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (tb *tableBuilder) property(where string, got, want map[string]any) openapi.PropertyMarkers {
	var pm openapi.PropertyMarkers
	enums := map[string][]any{} // values, by where they are: "", items, additionalProperties
	for _, k := range keys(got, want) {
		if reflect.DeepEqual(got[k], want[k]) {
			continue
		}
		switch {
		case k == "enum" && got[k] == nil:
			enums[""] = asSlice(want[k])
		case k == "items" || k == "additionalProperties":
			if values := tb.subEnum(where+"."+k, asObject(got[k]), asObject(want[k])); values != nil {
				enums[k] = values
			}
		case k == "description":
			// below
		case strings.HasPrefix(k, "x-kubernetes-"):
			if pm.Extensions == nil {
				pm.Extensions = map[string]any{}
			}
			pm.Extensions[k] = want[k]
		default:
			tb.t.Errorf("%s: %s differs and the table cannot say it:\n got  %v\n want %v", where, k, got[k], want[k])
		}
	}
	described := "" // the enum the description lists: the property's, else its items' or values'
	for _, k := range []string{"additionalProperties", "items", ""} {
		if enums[k] != nil {
			described = k
		}
	}
	gd, _ := got["description"].(string)
	wd, _ := want["description"].(string)
	base, docs, breaks, ok := enumDocs(enums[described], wd)
	if !ok {
		tb.t.Errorf("%s: cannot read the enum text of %q", where, wd)
	}
	if base != gd {
		pm.Description = &base
	}
	pm.EnumDocBreaks = breaks
	for _, k := range []string{"", "items", "additionalProperties"} {
		values := enums[k]
		if values == nil {
			continue
		}
		var d []string
		if k == described {
			d = docs
		}
		switch e := tb.enum(values, d); k {
		case "":
			pm.Enum = e
		case "items":
			pm.ItemsEnum = e
		default:
			pm.ValuesEnum = e
		}
	}
	return pm
}

// subEnum is the enum values of an items or additionalProperties schema,
// the only difference the table says there.
func (tb *tableBuilder) subEnum(where string, got, want map[string]any) []any {
	for _, k := range keys(got, want) {
		if !reflect.DeepEqual(got[k], want[k]) && (k != "enum" || got[k] != nil) {
			tb.t.Errorf("%s.%s differs and the table cannot say it: got %v, want %v", where, k, got[k], want[k])
		}
	}
	return asSlice(want["enum"])
}

// enumDocs splits upstream's description want into the field's own text
// and the enum's "Possible enum values" text listing values, returning the
// values' comments and the newlines between (nil when there is no enum
// text).
func enumDocs(values []any, want string) (base string, docs []string, breaks *int, ok bool) {
	const header = "Possible enum values:"
	i := strings.LastIndex(want, header)
	if values == nil || i < 0 {
		return want, nil, nil, true
	}
	base = strings.TrimRight(want[:i], "\n")
	n := i - len(base)
	text := want[i+len(header):]
	docs = make([]string, len(values))
	for j, v := range values {
		head := "\n - `" + strconv.Quote(v.(string)) + "`"
		if !strings.HasPrefix(text, head) {
			return "", nil, nil, false
		}
		text = text[len(head):]
		end := len(text)
		if j+1 < len(values) {
			end = strings.Index(text, "\n - `"+strconv.Quote(values[j+1].(string))+"`")
			if end < 0 {
				return "", nil, nil, false
			}
		}
		docs[j] = strings.TrimPrefix(text[:end], " ")
		text = text[end:]
	}
	return base, docs, &n, want == base+strings.Repeat("\n", n)+openapi.EnumDoc(pairs(values, docs))
}

func pairs(values []any, docs []string) [][2]string {
	out := make([][2]string, len(values))
	for i, v := range values {
		out[i] = [2]string{v.(string), docs[i]}
	}
	return out
}

// enum returns the index of an enum type, adding it when new.
func (tb *tableBuilder) enum(values []any, docs []string) *int {
	if docs == nil {
		docs = make([]string, len(values))
	}
	e := pairs(values, docs)
	b, _ := json.Marshal(e)
	i, ok := tb.enums[string(b)]
	if !ok {
		i = len(tb.table.Enums)
		tb.enums[string(b)] = i
		tb.table.Enums = append(tb.table.Enums, e)
	}
	return &i
}

// render writes the table as Go source: a JSON string, one enum type or
// model per line.
func render(t *testing.T, table *openapi.MarkerTable) []byte {
	var pieces []string
	pieces = append(pieces, `{"e":[`)
	for i, e := range table.Enums {
		pieces = append(pieces, mustJSON(t, e)+comma(i, len(table.Enums)))
	}
	pieces = append(pieces, `],"m":{`)
	names := slices.Sorted(maps.Keys(table.Models))
	for i, name := range names {
		pieces = append(pieces, mustJSON(t, name)+":"+mustJSON(t, table.Models[name])+comma(i, len(names)))
	}
	pieces = append(pieces, `}}`)
	var b bytes.Buffer
	b.WriteString("// Code generated by test/upstream/openapimarkers (go test ./openapimarkers -run TestMarkerTableIsCurrent -update). DO NOT EDIT.\n\n")
	b.WriteString("package openapi\n\n")
	size := len(strings.Join(pieces, ""))
	fmt.Fprintf(&b, "// markerData is the MarkerTable of kube-apiserver 1.37.2's k8s.io/api\n// definitions (%d models, %d enum types, %d bytes).\nconst markerData = \"\" +\n", len(table.Models), len(table.Enums), size)
	for i, p := range pieces {
		b.WriteString("\t" + strconv.Quote(p))
		if i < len(pieces)-1 {
			b.WriteString(" +")
		}
		b.WriteString("\n")
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func comma(i, n int) string {
	if i < n-1 {
		return ","
	}
	return ""
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func keys(a, b map[string]any) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func asObject(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asSlice(v any) []any           { s, _ := v.([]any); return s }
