package webhooks

import (
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
)

// TestPatchAnnotationIsUpstreams checks the annotation against upstream's
// encoding (its PatchAuditAnnotation of the decoded patch, as its
// jsonPatchAnnotationValue writes it), for patches written directly and
// patches left to the general path.
func TestPatchAnnotationIsUpstreams(t *testing.T) {
	patches := []string{
		`[{"op":"add","path":"/metadata/labels/x","value":"true"}]`,
		`[ {"value" : "v", "path":"/a", "op":"replace"} , {"op":"remove","path":"/b"} ]`,
		`[{"op":"add","path":"/a","value":null},{"op":"test","path":"/t","value":false},{"op":"add","path":"/u","value":true}]`,
		`[{"op":"add","path":"/a","value":1}]`,
		`[{"op":"add","path":"/a","value":1.50}]`,
		`[{"op":"add","path":"/a","value":12345678901234567890}]`,
		`[{"op":"add","path":"/a","value":{"z":1,"a":"b"}}]`,
		`[{"op":"add","path":"/a","value":[ "x" ,"y"]}]`,
		`[{"op":"add","path":"/a","value":"esc\"aped"}]`,
		`[{"op":"add","path":"/a","value":"\u003cscript\u003e"}]`,
		`[{"op":"add","path":"/a","value":"<b>&"}]`,
		`[{"op":"add","path":"/a","value":"ünï"}]`,
		`[{"op":"add","path":"/a~1b","value":"x","path":"/dup"}]`,
		`[{"op":"add","pa\u0074h":"/a","value":"x"}]`,
		`[{"op":"add","<k>":"/a"}]`,
		`[{"op":"add","path":"/a","value":"x"},null]`,
		`[{}]`,
		`[{"op":"move","from":"/a","path":"/b"},{"op":"copy","from":"/b","path":"/c"}]`,
		`[{"op":"add","path":"/a","value":{"k": 1}}]`,
		`[{"op":"add","path":"/a","value":"a b"}]`,
		"[{\"op\":\"add\",\"path\":\"/a\",\"value\":\"line\u2028sep\"}]",
		"[{\"op\":\"add\",\"path\":\"/a\",\"value\":\"para\u2029sep\"}]",
		`[{"op":"add","path":"/a","value":{"k":["a\\",{"x":"\"} ]"}]}}]`,
		`[{"op":"add","path":"/a","value":[1,2
]}]`,
		`[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`,
	}
	// the patches whose values encoding/json writes as they are: no
	// whitespace outside strings, no <, >, & or U+2028/U+2029
	directlyEncoded := map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 8: true, 9: true, 11: true,
		12: true, 13: true, 14: true, 16: true, 17: true, 19: true, 22: true, 24: true}
	hooks := []*hook{{Config: "cfg", Name: "m.example.com"}, {Config: "c<&>", Name: "n\u2028"}}
	for _, h := range hooks {
		for i, raw := range patches {
			patch, err := jsonpatch.DecodePatch([]byte(raw))
			if err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			if _, plain := appendPlainPatchAnnotation(nil, h, patch); plain != directlyEncoded[i] {
				t.Errorf("%s: direct encoding used: %v", raw, plain)
			}
			want, err := utiljson.Marshal(mutating.PatchAuditAnnotation{Configuration: h.Config, Webhook: h.Name, Patch: patch, PatchType: string(admissionv1.PatchTypeJSONPatch)})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := patchAnnotation(h, patch)
			if got != string(want) || !ok {
				t.Errorf("%s:\n got %s (%v)\nwant %s", raw, got, ok, want)
			}
		}
	}
}

// BenchmarkPatchAnnotation is the annotation of a patch that adds a
// label map, as ../shared/tools/loadgen's mutating webhook sends.
func BenchmarkPatchAnnotation(b *testing.B) {
	patch, err := jsonpatch.DecodePatch([]byte(`[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`))
	if err != nil {
		b.Fatal(err)
	}
	h := &hook{Config: "cfg", Name: "m.example.com"}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := patchAnnotation(h, patch); !ok {
			b.Fatal("no annotation")
		}
	}
}
