package conversion

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// answering is a webhook that answers a v1 review with what answer makes
// of the request (decoded JSON) and its converted objects.
func answering(answer func(review map[string]any) map[string]any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review map[string]any
		_ = json.NewDecoder(r.Body).Decode(&review)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer(review))
	})
}

// converted is a successful answer: the request's objects relabelled to
// the desired version, then changed by edit.
func converted(edit func(objs []any)) func(map[string]any) map[string]any {
	return func(review map[string]any) map[string]any {
		req := review["request"].(map[string]any)
		objs, _ := req["objects"].([]any)
		for _, o := range objs {
			o.(map[string]any)["apiVersion"] = req["desiredAPIVersion"]
		}
		if edit != nil {
			edit(objs)
		}
		return map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
			"response": map[string]any{"uid": req["uid"], "convertedObjects": objs, "result": map[string]any{"status": "Success"}}}
	}
}

func metadataOf(o any) map[string]any { return o.(map[string]any)["metadata"].(map[string]any) }

func TestResponseChecksAreUpstreams(t *testing.T) {
	const prefix = "conversion webhook for stable.example.com/v1, Kind=Endpoint "
	cases := []struct {
		name   string
		answer func(map[string]any) map[string]any
		single string // error converting one object
		list   string // error converting two
	}{
		{"uid mismatch", func(r map[string]any) map[string]any {
			a := converted(nil)(r)
			a["response"].(map[string]any)["uid"] = "other"
			return a
		}, prefix + `failed: expected response.uid="UID", got "other"`, ""},
		{"failure with message", func(r map[string]any) map[string]any {
			a := converted(nil)(r)
			a["response"].(map[string]any)["result"] = map[string]any{"status": "Failure", "message": "cannot convert"}
			return a
		}, prefix + "failed: cannot convert", prefix + "failed: cannot convert"},
		{"failure without message", func(r map[string]any) map[string]any {
			a := converted(nil)(r)
			a["response"].(map[string]any)["result"] = map[string]any{"status": "Failure"}
			return a
		}, prefix + "failed: response.result.status was 'Failure', not 'Success'", ""},
		{"no response", func(r map[string]any) map[string]any {
			return map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}
		}, prefix + "failed: no response provided", ""},
		{"wrong version", converted(func(objs []any) { objs[0].(map[string]any)["apiVersion"] = "stable.example.com/v3" }),
			prefix + "returned invalid object at index 0: invalid groupVersion (expected stable.example.com/v2, received stable.example.com/v3)",
			prefix + "returned invalid converted object at index 0: invalid groupVersion (expected stable.example.com/v2, received stable.example.com/v3)"},
		{"wrong kind", converted(func(objs []any) { objs[0].(map[string]any)["kind"] = "Other" }),
			prefix + "returned invalid object at index 0: invalid kind (expected Endpoint, received Other)",
			prefix + "returned invalid converted object at index 0: invalid kind (expected Endpoint, received Other)"},
		{"renamed", converted(func(objs []any) { metadataOf(objs[0])["name"] = "x" }),
			prefix + "returned invalid object: must have the same name: a != x",
			prefix + "returned invalid converted object at index 0: must have the same name: a != x"},
		{"new uid", converted(func(objs []any) { metadataOf(objs[0])["uid"] = "x" }),
			prefix + "returned invalid object: must have the same UID: uid-a != x", ""},
		{"invalid label", converted(func(objs []any) { metadataOf(objs[0])["labels"] = map[string]any{"a b": "c"} }),
			prefix + "returned invalid metadata: metadata.labels: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
			""},
		{"label not a string", converted(func(objs []any) { metadataOf(objs[0])["labels"] = map[string]any{"a": 1} }),
			prefix + "returned invalid metadata: metadata.labels[a] must be a string, but is int64 in converted object",
			prefix + "returned invalid metadata in object at index 0: metadata.labels[a] must be a string, but is int64 in converted object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := webhooktest.Start(t, answering(tc.answer))
			conv := converterFor(t, webhookCRD(srv.URL, srv.CABundle(), "v1"))
			for _, n := range []int{1, 2} {
				want := tc.single
				if n == 2 {
					want = tc.list
				}
				objs := []*unstructured.Unstructured{endpointV1("a", "h", 1), endpointV1("b", "h", 2)}[:n]
				err := conv.Convert(context.Background(), objs, gvV2)
				if want == "" {
					if err == nil {
						t.Errorf("%d objects: no error", n)
					}
					continue
				}
				if err == nil || replaceUID(err.Error()) != want {
					t.Errorf("%d objects: err = %v\nwant %s", n, err, want)
				}
			}
		})
	}
}

func TestCountMismatch(t *testing.T) {
	srv := webhooktest.Start(t, answering(converted(nil)))
	conv := converterFor(t, webhookCRD(srv.URL, srv.CABundle(), "v1"))
	srvShort := webhooktest.Start(t, answering(func(r map[string]any) map[string]any {
		a := converted(nil)(r)
		resp := a["response"].(map[string]any)
		resp["convertedObjects"] = resp["convertedObjects"].([]any)[:1]
		return a
	}))
	short := converterFor(t, webhookCRD(srvShort.URL, srvShort.CABundle(), "v1"))
	objs := []*unstructured.Unstructured{endpointV1("a", "h", 1), endpointV1("b", "h", 2)}
	if err := conv.Convert(context.Background(), objs, gvV2); err != nil {
		t.Fatal(err)
	}
	objs = []*unstructured.Unstructured{endpointV1("a", "h", 1), endpointV1("b", "h", 2)}
	err := short.Convert(context.Background(), objs, gvV2)
	want := "conversion webhook for stable.example.com/v1, Kind=Endpoint returned 1 objects, expected 2"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	if objs[0].GetAPIVersion() != gvV1.String() {
		t.Errorf("a failed conversion changed its input")
	}
}

func TestMetadataOtherThanLabelsAndAnnotationsIsRestored(t *testing.T) {
	srv := webhooktest.Start(t, answering(converted(func(objs []any) {
		m := metadataOf(objs[0])
		m["labels"] = map[string]any{"added": "yes"}
		m["annotations"] = map[string]any{"note": "converted"}
		m["finalizers"] = []any{"sneaky"}
		m["generation"] = 42
	})))
	conv := converterFor(t, webhookCRD(srv.URL, srv.CABundle(), "v1"))
	obj := endpointV1("a", "h", 1)
	obj.SetGeneration(3)
	objs := []*unstructured.Unstructured{obj}
	if err := conv.Convert(context.Background(), objs, gvV2); err != nil {
		t.Fatal(err)
	}
	got := objs[0]
	if got.GetLabels()["added"] != "yes" || got.GetAnnotations()["note"] != "converted" {
		t.Errorf("labels and annotations not kept: %v %v", got.GetLabels(), got.GetAnnotations())
	}
	if len(got.GetFinalizers()) != 0 || got.GetGeneration() != 3 {
		t.Errorf("metadata not restored: finalizers %v generation %d", got.GetFinalizers(), got.GetGeneration())
	}
}

// replaceUID puts UID in place of the random request uid in an error.
func replaceUID(s string) string {
	const marker = `expected response.uid="`
	before, after, ok := strings.Cut(s, marker)
	if !ok {
		return s
	}
	_, rest, _ := strings.Cut(after, `"`)
	return before + marker + "UID\"" + rest
}
