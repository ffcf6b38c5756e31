package webhook

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	jsonpatchv4 "gopkg.in/evanphx/json-patch.v4"
)

func TestCreatePatch(t *testing.T) {
	tests := []struct {
		name, a, b, want string
	}{
		{"equal", `{"a":1,"b":[1,{"c":null}]}`, `{"b":[1,{"c":null}],"a":1}`, `[]`},
		{"add key", `{}`, `{"a":{"b":1}}`, `[{"op":"add","path":"/a","value":{"b":1}}]`},
		{"remove key", `{"a":1,"b":2}`, `{"b":2}`, `[{"op":"remove","path":"/a"}]`},
		{"replace scalar", `{"a":"x"}`, `{"a":"y"}`, `[{"op":"replace","path":"/a","value":"y"}]`},
		{"add null", `{}`, `{"a":null}`, `[{"op":"add","path":"/a","value":null}]`},
		{"replace with null", `{"a":1}`, `{"a":null}`, `[{"op":"replace","path":"/a","value":null}]`},
		{"type change", `{"a":{"b":1}}`, `{"a":[1]}`, `[{"op":"replace","path":"/a","value":[1]}]`},
		{"nested", `{"m":{"l":{"x":"1"}}}`, `{"m":{"l":{"x":"1","y":"2"}}}`, `[{"op":"add","path":"/m/l/y","value":"2"}]`},
		{"escape ~ and /", `{"a/b":1,"c~d":1}`, `{"a/b":2,"c~d":2,"~1":0}`,
			`[{"op":"replace","path":"/a~1b","value":2},{"op":"replace","path":"/c~0d","value":2},{"op":"add","path":"/~01","value":0}]`},
		{"empty key", `{"":1}`, `{"":2}`, `[{"op":"replace","path":"/","value":2}]`},
		{"nested under empty key", `{"":{"a":1,"b":1}}`, `{"":{"a":2,"b":1}}`, `[{"op":"replace","path":"/","value":{"a":2,"b":1}}]`},
		{"array append", `{"c":[{"n":"a"}]}`, `{"c":[{"n":"a"},{"n":"s"},{"n":"t"}]}`,
			`[{"op":"add","path":"/c/-","value":{"n":"s"}},{"op":"add","path":"/c/-","value":{"n":"t"}}]`},
		{"array truncate", `{"c":[1,2,3]}`, `{"c":[1]}`, `[{"op":"remove","path":"/c/2"},{"op":"remove","path":"/c/1"}]`},
		{"array element field", `{"c":[{"i":"a"},{"i":"b"}]}`, `{"c":[{"i":"a"},{"i":"c"}]}`, `[{"op":"replace","path":"/c/1/i","value":"c"}]`},
		{"array insert at front", `{"c":[1,2]}`, `{"c":[0,1,2]}`, `[{"op":"replace","path":"/c","value":[0,1,2]}]`},
		{"array from empty", `{"c":[]}`, `{"c":[1]}`, `[{"op":"add","path":"/c/-","value":1}]`},
		{"number text", `{"n":1}`, `{"n":1.0}`, `[{"op":"replace","path":"/n","value":1.0}]`},
		{"big number kept", `{}`, `{"n":123456789012345678901234567890}`, `[{"op":"add","path":"/n","value":123456789012345678901234567890}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CreatePatch([]byte(tt.a), []byte(tt.b))
			if err != nil {
				t.Fatalf("CreatePatch: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("CreatePatch(%s, %s) = %s, want %s", tt.a, tt.b, got, tt.want)
			}
			checkPatchApplies(t, []byte(tt.a), []byte(tt.b), got)
		})
	}
}

func TestCreatePatchRejects(t *testing.T) {
	for _, tt := range [][2]string{{`[]`, `{}`}, {`{}`, `1`}, {`{`, `{}`}, {`{}`, `{} {}`}, {`null`, `{}`}} {
		if _, err := CreatePatch([]byte(tt[0]), []byte(tt[1])); err == nil {
			t.Errorf("CreatePatch(%s, %s) = nil error, want one", tt[0], tt[1])
		}
	}
}

// checkPatchApplies applies patch to a with json-patch v5 and v4 (the one
// kube-apiserver applies webhook patches with) and checks that both yield b.
func checkPatchApplies(t *testing.T, a, b, patch []byte) {
	t.Helper()
	want := mustDecode(t, b)
	p5, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("v5 DecodePatch(%s): %v", patch, err)
	}
	got5, err := p5.Apply(a)
	if err != nil {
		t.Fatalf("v5 Apply(%s) to %s: %v", patch, a, err)
	}
	if got := mustDecode(t, got5); !reflect.DeepEqual(got, want) {
		t.Fatalf("v5: %s patched with %s = %s, want %s", a, patch, got5, b)
	}
	p4, err := jsonpatchv4.DecodePatch(patch)
	if err != nil {
		t.Fatalf("v4 DecodePatch(%s): %v", patch, err)
	}
	got4, err := p4.Apply(a)
	if err != nil {
		t.Fatalf("v4 Apply(%s) to %s: %v", patch, a, err)
	}
	if got := mustDecode(t, got4); !reflect.DeepEqual(got, want) {
		t.Fatalf("v4: %s patched with %s = %s, want %s", a, patch, got4, b)
	}
}

func mustDecode(t *testing.T, data []byte) any {
	t.Helper()
	v, err := decodeJSON(data)
	if err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return v
}

// TestCreatePatchProperty: for random objects, and for random edits of
// random objects, the patch applied to the original yields the modified one.
func TestCreatePatchProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		a := randomObject(r, 4)
		var b map[string]any
		if i%4 == 0 {
			b = randomObject(r, 4)
		} else {
			b = mutate(r, deepCopy(a).(map[string]any), 4).(map[string]any)
		}
		aj, _ := json.Marshal(a)
		bj, _ := json.Marshal(b)
		patch, err := CreatePatch(aj, bj)
		if err != nil {
			t.Fatalf("CreatePatch(%s, %s): %v", aj, bj, err)
		}
		checkPatchApplies(t, aj, bj, patch)
	}
}

var randomKeys = []string{"a", "b", "metadata", "labels", "a/b", "~", "~1", "/", "", "-", "0", "1", "ü"}

func randomValue(r *rand.Rand, depth int) any {
	n := 6
	if depth <= 0 {
		n = 4
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return json.Number(fmt.Sprint(r.IntN(5) - 1))
	case 3:
		return strings.Repeat("x", r.IntN(3))
	case 4:
		arr := make([]any, r.IntN(4))
		for i := range arr {
			arr[i] = randomValue(r, depth-1)
		}
		return arr
	}
	return randomObject(r, depth-1)
}

func randomObject(r *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	for range r.IntN(5) {
		m[randomKeys[r.IntN(len(randomKeys))]] = randomValue(r, depth)
	}
	return m
}

// mutate makes a few random edits to v (in place where it can) and returns it.
func mutate(r *rand.Rand, v any, depth int) any {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			switch r.IntN(5) {
			case 0:
				delete(t, k)
			case 1:
				t[k] = mutate(r, child, depth-1)
			}
		}
		if r.IntN(3) == 0 {
			t[randomKeys[r.IntN(len(randomKeys))]] = randomValue(r, depth)
		}
		return t
	case []any:
		switch r.IntN(4) {
		case 0:
			return append(t, randomValue(r, depth))
		case 1:
			if len(t) > 0 {
				return t[:r.IntN(len(t))]
			}
		case 2:
			for i := range t {
				if r.IntN(2) == 0 {
					t[i] = mutate(r, t[i], depth-1)
				}
			}
			return t
		}
		return t
	}
	if r.IntN(2) == 0 {
		return randomValue(r, depth)
	}
	return v
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, c := range t {
			m[k] = deepCopy(c)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, c := range t {
			a[i] = deepCopy(c)
		}
		return a
	}
	return v
}

// FuzzCreatePatch checks the patch-from-diff property on arbitrary JSON
// objects: the patch applied to the original yields the modified object.
// Its seed corpus is in testdata/fuzz/FuzzCreatePatch.
func FuzzCreatePatch(f *testing.F) {
	f.Add([]byte(`{"metadata":{"labels":{"a":"b"}}}`), []byte(`{"metadata":{"labels":{"a":"c","a/b~":"d"}}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		av, err1 := decodeJSON(a)
		bv, err2 := decodeJSON(b)
		_, aok := av.(map[string]any)
		_, bok := bv.(map[string]any)
		if err1 != nil || err2 != nil || !aok || !bok {
			if _, err := CreatePatch(a, b); err == nil {
				t.Fatalf("CreatePatch(%q, %q) accepted a document that is not one JSON object", a, b)
			}
			return
		}
		// Normalise: duplicate keys and invalid UTF-8 are decoded the way
		// encoding/json does, which json-patch need not share.
		a, _ = json.Marshal(av)
		b, _ = json.Marshal(bv)
		patch, err := CreatePatch(a, b)
		if err != nil {
			t.Fatalf("CreatePatch(%s, %s): %v", a, b, err)
		}
		checkPatchApplies(t, a, b, patch)
	})
}
