package webhooks

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
)

func fastPatchSeedPod() []byte {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "web", "a/b": "c~d"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}, {Name: "d", Image: "j"}}}}
	b, _ := json.Marshal(pod)
	return b
}

// What spliceJSONPatch applies, json-patch v4 applies too, to the same
// text (fields such as FieldsV1 keep the raw JSON), which decodes (as the
// dispatcher decodes it, and generically) to the same object.
func FuzzSpliceJSONPatchIsV4(f *testing.F) {
	pod := string(fastPatchSeedPod())
	for _, seed := range [][2]string{
		{pod, `[{"op":"add","path":"/metadata/labels/injected","value":"true"}]`},
		{pod, `[{"op":"add","path":"/metadata/labels/app","value":"other"}]`},
		{pod, `[{"op":"replace","path":"/metadata/labels/missing","value":"x"}]`},
		{pod, `[{"op":"remove","path":"/metadata/labels/app"},{"op":"remove","path":"/metadata/labels/a~1b"}]`},
		{pod, `[{"op":"add","path":"/metadata/annotations","value":{}},{"op":"add","path":"/metadata/annotations/k","value":"v"}]`},
		{pod, `[{"op":"add","path":"/spec/containers/-","value":{"name":"sidecar","image":"s"}}]`},
		{pod, `[{"op":"add","path":"/spec/containers/0","value":{"name":"first","image":"s"}}]`},
		{pod, `[{"op":"add","path":"/spec/containers/2","value":{"name":"last","image":"s"}}]`},
		{pod, `[{"op":"add","path":"/spec/containers/3","value":{"name":"x"}}]`},
		{pod, `[{"op":"add","path":"/spec/containers/0/env/-","value":{"name":"B","value":"2"}}]`},
		{pod, `[{"op":"replace","path":"/spec/containers/1/image","value":"k"}]`},
		{pod, `[{"op":"remove","path":"/spec/containers/0"}]`},
		{pod, `[{"op":"remove","path":"/spec/containers/1"}]`},
		{pod, `[{"op":"add","path":"/spec/containers/-1","value":{}}]`},
		{pod, `[{"op":"add","path":"/spec/nodeSelector/x","value":"y"}]`},
		{pod, `[{"op":"add","path":"/metadata/labels/x"}]`},
		{pod, `[{"op":"add","path":"/metadata/labels/x","value":null}]`},
		{pod, `[{"op":"test","path":"/metadata/name","value":"p"}]`},
		{pod, `[{"op":"add","path":"","value":{}}]`},
		{pod, `[{"op":"add","path":"metadata/x","value":1}]`},
		{pod, `[{"op":"add","path":"/","value":1}]`},
		{pod, `[{"op":"add","path":"/metadata/labels/<x>","value":"1"}]`},
		{pod, `[{"op":"add","path":"/metadata/x","value":{"a":1,"a":{"b":2}}},{"op":"add","path":"/metadata/x/c","value":3}]`},
		{`{"metadata":{"managedFields":[{"fieldsV1":{"f:metadata":{"f:labels":{}}}}]},"data":{"b":1,"a":2}}`,
			`[{"op": "replace", "path": "/metadata/managedFields/0/fieldsV1", "value": {"f:metadata": {"f:labels": {}}}},{"op":"add","path":"/data/c","value":"<b>"}]`},
		{`{ "z" : 1 , "y" : { "x" : [ 1 , 2 ] } }`, `[{"op":"add","path":"/y/w","value":"&"}]`},
		{`{"a<":1,"b":{}}`, `[{"op":"add","path":"/b/c","value":1}]`},
		{`{"a":[],"b":{},"c":[ ],"d":{ }}`, `[{"op":"add","path":"/a/-","value":1},{"op":"add","path":"/b/k","value":[1, 2]},{"op":"add","path":"/c/0","value":2},{"op":"add","path":"/d/k","value":"v"}]`},
		{`{"a":{"x":1,"x":{"y":1}}}`, `[{"op":"add","path":"/a/z","value":1}]`},
		{`{"a":[[1],[2]]}`, `[{"op":"remove","path":"/a/1/0"},{"op":"replace","path":"/a/0","value":"s"}]`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, doc, rawPatch []byte) {
		var root map[string]json.RawMessage
		if !json.Valid(doc) || json.Unmarshal(doc, &root) != nil || root == nil {
			return // the dispatcher patches an encoded object
		}
		patch, err := jsonpatch.DecodePatch(rawPatch)
		if err != nil {
			return
		}
		got, ok := spliceJSONPatch(doc, patch)
		if !ok {
			return
		}
		want, err := patch.Apply(doc)
		if err != nil {
			t.Fatalf("spliced %s into %s where v4 fails: %v", rawPatch, doc, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s on %s:\n spliced %s\n      v4 %s", rawPatch, doc, got, want)
		}
		var g, w any
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(got, &g); err != nil {
			t.Fatal(err)
		}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s on %s:\n spliced %s\n      v4 %s", rawPatch, doc, got, want)
		}
		var gp, wp corev1.Pod
		gErr, wErr := sigsjson.UnmarshalCaseSensitivePreserveInts(got, &gp), sigsjson.UnmarshalCaseSensitivePreserveInts(want, &wp)
		if (gErr == nil) != (wErr == nil) || gErr == nil && !reflect.DeepEqual(gp, wp) {
			t.Fatalf("%s on %s decode as a Pod differently:\n spliced %s (%v)\n      v4 %s (%v)", rawPatch, doc, got, gErr, want, wErr)
		}
	})
}

// The patches webhooks commonly send are spliced, not left to v4.
func TestSpliceJSONPatchTakesCommonPatches(t *testing.T) {
	doc := fastPatchSeedPod()
	for _, p := range []string{
		`[{"op":"add","path":"/metadata/labels/injected","value":"true"}]`,
		`[{"op":"add","path":"/metadata/annotations","value":{"a":"b"}}]`,
		`[{"op":"replace","path":"/metadata/labels/app","value":"x"},{"op":"remove","path":"/metadata/labels/a~1b"}]`,
		`[{"op":"add","path":"/spec/containers/-","value":{"name":"sidecar","image":"s"}}]`,
		`[{"op":"add","path":"/spec/containers/0/env/0","value":{"name":"B"}},{"op":"remove","path":"/spec/containers/1"}]`,
	} {
		patch, err := jsonpatch.DecodePatch([]byte(p))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := spliceJSONPatch(doc, patch); !ok {
			t.Errorf("%s was left to v4", p)
		}
	}
}

// scanPatch decodes what jsonpatch.DecodePatch decodes, the same.
func FuzzScanPatchIsDecodePatch(f *testing.F) {
	for _, seed := range []string{
		`[{"op":"add","path":"/a","value":{"b":[1, 2]}}]`, `[]`, ` [ ] `, `null`, `[{}]`, `[null]`, `[1]`, `{}`,
		`[{"op":"add","op":"remove","value":null}]`, `[{"o\u0070":"add"}]`, `[{"op":"add"},`, `[{"value":"\"]}"}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := scanPatch(raw)
		if !ok {
			return
		}
		want, err := jsonpatch.DecodePatch(raw)
		if err != nil {
			t.Fatalf("scanPatch(%s) decoded what DecodePatch refuses: %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scanPatch(%s) = %v, DecodePatch = %v", raw, got, want)
		}
	})
}
