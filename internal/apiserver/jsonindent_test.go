package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// indentWhole is what the indenter must write for valid JSON: the answer
// indented whole, as prettyWriter did before it streamed.
func indentWhole(t testing.TB, src []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimRight(src, "\n"), "", "  "); err != nil {
		t.Fatalf("json.Indent(%q): %v", src, err)
	}
	return out.Bytes()
}

// indentStreaming writes src to a jsonIndenter in pieces, cut at cuts
// (ascending offsets into src).
func indentStreaming(t testing.TB, src []byte, cuts []int) []byte {
	t.Helper()
	var out bytes.Buffer
	ind := newJSONIndenter(&out)
	from := 0
	for _, to := range append(cuts, len(src)) {
		if n, err := ind.Write(src[from:to]); n != to-from || err != nil {
			t.Fatalf("Write(%q) = %d, %v", src[from:to], n, err)
		}
		from = to
	}
	if err := ind.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// everyCut cuts src before every byte.
func everyCut(src []byte) []int {
	cuts := make([]int, len(src))
	for i := range cuts {
		cuts[i] = i
	}
	return cuts
}

var indentCases = []string{
	`{}`, `[]`, `{}` + "\n", `[]` + "\n\n",
	`{"a":{}}`, `{"a":[]}`, `[{}]`, `[[]]`, `[[],{},[[]],{"":{}}]`, `[{},{}]`,
	`{"a":1,"b":[1,2,3],"c":{"d":null}}`,
	`{"k":"a \"quoted\" value"}`, `{"k":"back\\slash"}`, `{"k":"\\"}`, `["\\\"", "\"\\"]`,
	`{"\"{[,:]}\"":"{[,:]}"}`, `"a string with {[:,]} and  spaces"`,
	`{"u":"\u00e9\u2028\ud83d\ude00","raw":"é😀"}`, `"\u005c"`, `"\/\b\f\n\r\t"`,
	`0`, `-0`, `12.5e-3`, `1E+10`, `[0,-1,2.5,3e7,-4.25E-2]`,
	`true`, `false`, `null`, `[true,false,null]`, `{"t":true,"f":false,"n":null}`,
	`""`, `[""]`, `{"":""}`,
	" \t\r\n {\n  \"a\" :\t[ 1 ,\r\n 2 ] , \"b\" : { } , \"c\" : [ ]\n}\n",
	"[ ]", "{ \n }", "[\n\t[ ]\n]",
	"{} ", "{}\n ", "{} \n", "{}\n \n\n", "1\t", "1 \n\t\n", "\"s\"\r\n",
	`{"metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"a","labels":{}},"data":{"k":"v"}}]}` + "\n",
	strings.Repeat("[", 70) + strings.Repeat("]", 70),
	strings.Repeat("[1,", 70) + "2" + strings.Repeat("]", 70),
}

// The indenter writes what json.Indent writes of the whole input, however
// the input is cut: whole, a byte at a time.
func TestJSONIndenterMatchesIndent(t *testing.T) {
	for _, c := range indentCases {
		src := []byte(c)
		if !json.Valid(src) {
			t.Fatalf("case %q is not JSON", c)
		}
		want := indentWhole(t, src)
		if got := indentStreaming(t, src, nil); !bytes.Equal(got, want) {
			t.Errorf("indenting %q = %q, want %q", c, got, want)
		}
		if got := indentStreaming(t, src, everyCut(src)); !bytes.Equal(got, want) {
			t.Errorf("indenting %q a byte at a time = %q, want %q", c, got, want)
		}
	}
}

// Random JSON values, with random whitespace between tokens, written in
// random pieces: cut inside strings, escapes, numbers and literals too.
func TestJSONIndenterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		var b bytes.Buffer
		g := jsonGenerator{rng: rng, b: &b}
		g.space()
		g.value(0)
		g.space()
		src := b.Bytes()
		if !json.Valid(src) {
			t.Fatalf("generated %q is not JSON", src)
		}
		want := indentWhole(t, src)
		cuts := randomCuts(rng, len(src))
		if got := indentStreaming(t, src, cuts); !bytes.Equal(got, want) {
			t.Fatalf("value %d: indenting %q cut at %v = %q, want %q", i, src, cuts, got, want)
		}
	}
}

func randomCuts(rng *rand.Rand, n int) []int {
	if n == 0 {
		return nil
	}
	cuts := make([]int, rng.IntN(8))
	for i := range cuts {
		cuts[i] = rng.IntN(n + 1)
	}
	slices.Sort(cuts)
	return cuts
}

// jsonGenerator writes random JSON, stressing what the indenter tracks:
// empty and nested brackets, punctuation and escapes in strings.
type jsonGenerator struct {
	rng *rand.Rand
	b   *bytes.Buffer
}

func (g *jsonGenerator) value(depth int) {
	kind := g.rng.IntN(8)
	if depth > 5 {
		kind %= 4 // scalars only
	}
	switch kind {
	case 0:
		g.str()
	case 1:
		g.number()
	case 2:
		g.b.WriteString([]string{"true", "false", "null"}[g.rng.IntN(3)])
	case 3:
		g.str()
	case 4, 5:
		g.object(depth)
	default:
		g.array(depth)
	}
}

func (g *jsonGenerator) object(depth int) {
	g.b.WriteByte('{')
	for i := range g.rng.IntN(4) {
		if i > 0 {
			g.space()
			g.b.WriteByte(',')
		}
		g.space()
		g.str()
		g.space()
		g.b.WriteByte(':')
		g.space()
		g.value(depth + 1)
	}
	g.space()
	g.b.WriteByte('}')
}

func (g *jsonGenerator) array(depth int) {
	g.b.WriteByte('[')
	for i := range g.rng.IntN(4) {
		if i > 0 {
			g.space()
			g.b.WriteByte(',')
		}
		g.space()
		g.value(depth + 1)
	}
	g.space()
	g.b.WriteByte(']')
}

var stringPieces = []string{
	"a", "Z", " ", "{", "}", "[", "]", ",", ":", "é", "😀",
	`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00e9`, `\uD83D\uDE00`, `\u005C`, `\u0022`,
}

func (g *jsonGenerator) str() {
	g.b.WriteByte('"')
	for range g.rng.IntN(6) {
		g.b.WriteString(stringPieces[g.rng.IntN(len(stringPieces))])
	}
	g.b.WriteByte('"')
}

func (g *jsonGenerator) number() {
	if g.rng.IntN(2) == 0 {
		g.b.WriteByte('-')
	}
	if g.rng.IntN(3) == 0 {
		g.b.WriteByte('0')
	} else {
		fmt.Fprint(g.b, 1+g.rng.IntN(100000))
	}
	if g.rng.IntN(3) == 0 {
		fmt.Fprintf(g.b, ".%d", g.rng.IntN(1000))
	}
	if g.rng.IntN(4) == 0 {
		fmt.Fprintf(g.b, "%s%s%d", []string{"e", "E"}[g.rng.IntN(2)], []string{"", "+", "-"}[g.rng.IntN(3)], g.rng.IntN(30))
	}
}

// space writes nothing most of the time, else a little whitespace.
func (g *jsonGenerator) space() {
	if g.rng.IntN(3) > 0 {
		return
	}
	for range 1 + g.rng.IntN(3) {
		g.b.WriteByte(" \t\r\n"[g.rng.IntN(4)])
	}
}

// withoutWhitespace is s without spaces, tabs, CRs and newlines, wherever
// they are.
func withoutWhitespace(s []byte) []byte {
	var out []byte
	for _, c := range s {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			out = append(out, c)
		}
	}
	return out
}

// Input that is not JSON is written as it came but for whitespace, and the
// indenter neither panics nor stops on it.
func TestJSONIndenterInvalid(t *testing.T) {
	cases := []string{
		`]]]}}`, `}{`, `[`, `{"a":`, `{"a" "b"}`, `"unterminated`, `"\`, `1 2`, "1 \n 2\n",
		`{,}`, `[,]`, `::`, `{"a":[}`, `\"`, "nul", "\x00\xff{", "[\n\n]]\n\n[",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "{}[],:\"\\ \t\r\nab1-.e\x00\xff"
	for range 2000 {
		src := make([]byte, rng.IntN(40))
		for i := range src {
			src[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(src))
	}
	for _, c := range cases {
		src := []byte(c)
		for _, cuts := range [][]int{nil, everyCut(src), randomCuts(rng, len(src))} {
			got := indentStreaming(t, src, cuts)
			if !bytes.Equal(withoutWhitespace(got), withoutWhitespace(src)) {
				t.Errorf("indenting %q cut at %v = %q, want the same bytes but whitespace", c, cuts, got)
			}
			if json.Valid(src) {
				if want := indentWhole(t, src); !bytes.Equal(got, want) {
					t.Errorf("indenting %q cut at %v = %q, want %q", c, cuts, got, want)
				}
			}
		}
	}
}

// FuzzPrettyIndent: the indenter writes what json.Indent writes for any
// valid JSON, cut anywhere; for any input, the same bytes but whitespace.
func FuzzPrettyIndent(f *testing.F) {
	for _, c := range indentCases {
		f.Add([]byte(c), uint16(7))
	}
	f.Add([]byte(`{"a":"\"}\\"}`), uint16(3))
	f.Add([]byte(`]x[`), uint16(1))
	f.Fuzz(func(t *testing.T, src []byte, step uint16) {
		// the output grows with the length times the depth, as
		// json.Indent's: deep inputs would make the fuzzer crawl
		if bytes.Count(src, []byte("["))+bytes.Count(src, []byte("{")) > 256 {
			return
		}
		var cuts []int
		if step > 0 {
			for at := int(step); at < len(src); at += int(step) {
				cuts = append(cuts, at)
			}
		}
		got := indentStreaming(t, src, cuts)
		if !bytes.Equal(withoutWhitespace(got), withoutWhitespace(src)) {
			t.Fatalf("indenting %q = %q, want the same bytes but whitespace", src, got)
		}
		if json.Valid(src) {
			if want := indentWhole(t, src); !bytes.Equal(got, want) {
				t.Fatalf("indenting %q cut every %d = %q, want %q", src, step, got, want)
			}
		}
	})
}
