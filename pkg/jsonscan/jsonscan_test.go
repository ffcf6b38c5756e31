package jsonscan

import (
	"fmt"
	"testing"
)

func TestObjectAndArrayFindEveryValue(t *testing.T) {
	doc := []byte(` { "a" : "x\"}]" , "b\\" :[1, {"c":"]"} ,[ ]], "d":{"e":null},"f":-1.5e3, "g":true } `)
	var got []string
	start := Space(doc, 0)
	end, ok := Object(doc, start, func(m Member) bool {
		got = append(got, fmt.Sprintf("%s=%s", m.Key, doc[m.ValueStart:m.ValueEnd]))
		return true
	})
	want := `[a="x\"}]" b\\=[1, {"c":"]"} ,[ ]] d={"e":null} f=-1.5e3 g=true]`
	if !ok || fmt.Sprint(got) != want || Space(doc, end) != len(doc) {
		t.Fatalf("Object = %v, %v (end %d of %d), want %s", got, ok, end, len(doc), want)
	}
	var elems []string
	arr := []byte(`[1, {"c":"]"} ,[ ]]`)
	if _, ok := Array(arr, 0, func(s, e int) bool { elems = append(elems, string(arr[s:e])); return true }); !ok || fmt.Sprint(elems) != `[1 {"c":"]"} [ ]]` {
		t.Errorf("Array = %q, %v", elems, ok)
	}
	for _, bad := range []string{`{"a"}`, `{"a":1`, `{"a":"x}`, `{"a":1 "b":2}`, `[1 2]`, `{"a":[}`} {
		if _, ok := Object([]byte(bad), 0, func(Member) bool { return true }); ok {
			t.Errorf("Object(%s) followed text that is not an object", bad)
		}
	}
}
