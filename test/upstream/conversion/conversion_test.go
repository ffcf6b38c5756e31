package conversion

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	upstream "k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/conversion"
	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

var (
	gvV1 = schema.GroupVersion{Group: "stable.example.com", Version: "v1"}
	gvV2 = schema.GroupVersion{Group: "stable.example.com", Version: "v2"}
)

// uuidPattern is a request uid, random on both sides.
var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// call is one request a webhook received, with the request uid replaced.
type call struct {
	Path, Query, ContentType, Accept, UserAgent string
	Review                                      map[string]any
}

// hook is a webhook that records its calls and answers with answer.
type hook struct {
	mu     sync.Mutex
	calls  []call
	answer func(review map[string]any) any
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var review map[string]any
	_ = json.Unmarshal(body, &review)
	answer := h.answer(review)
	if req, ok := review["request"].(map[string]any); ok {
		req["uid"] = "UID"
	}
	h.mu.Lock()
	h.calls = append(h.calls, call{Path: r.URL.Path, Query: r.URL.RawQuery, ContentType: r.Header.Get("Content-Type"),
		Accept: r.Header.Get("Accept"), UserAgent: r.Header.Get("User-Agent"), Review: review})
	h.mu.Unlock()
	if s, ok := answer.(string); ok {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, s)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

func (h *hook) take() []call {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.calls
	h.calls = nil
	return out
}

func crd(url string, caBundle []byte, reviewVersions ...string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "stable.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Endpoint", Plural: "endpoints", ListKind: "EndpointList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true}, {Name: "v2", Served: true},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
					ConversionReviewVersions: reviewVersions,
				},
			},
		},
	}
}

func endpoint(gv schema.GroupVersion, name string, labels map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": name, "namespace": "default", "uid": "uid-" + name, "resourceVersion": "7",
		"generation": int64(2), "finalizers": []any{"f"}, "annotations": map[string]any{"a": "b"}}
	if labels != nil {
		meta["labels"] = labels
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": gv.String(), "kind": "Endpoint",
		"metadata": meta, "spec": map[string]any{"host": "h-" + name, "port": int64(80)}}}
}

// converted answers a review (v1 or v1beta1) with its objects relabelled
// to the desired version and changed by edit.
func converted(edit func(i int, obj map[string]any)) func(map[string]any) any {
	return func(review map[string]any) any {
		req := review["request"].(map[string]any)
		objs, _ := req["objects"].([]any)
		for i, o := range objs {
			m := o.(map[string]any)
			m["apiVersion"] = req["desiredAPIVersion"]
			spec, _ := m["spec"].(map[string]any)
			m["spec"] = map[string]any{"address": fmt.Sprint(spec["host"], ":", spec["port"])}
			if edit != nil {
				edit(i, m)
			}
		}
		return map[string]any{"apiVersion": review["apiVersion"], "kind": "ConversionReview",
			"response": map[string]any{"uid": req["uid"], "convertedObjects": objs, "result": map[string]any{"status": "Success"}}}
	}
}

// result is what one side made of a conversion: the objects or the error.
type result struct {
	Objects []map[string]any
	Err     string
	Calls   []call
}

func runAdmitd(t *testing.T, h *hook, def *apiextensionsv1.CustomResourceDefinition, objs []*unstructured.Unstructured, to schema.GroupVersion) result {
	t.Helper()
	conv, err := conversion.NewFactory(nil, nil).ConverterFor(def)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		in[i] = o.DeepCopy()
	}
	var r result
	if err := conv.Convert(context.Background(), in, to); err != nil {
		r.Err = err.Error()
	} else {
		for _, o := range in {
			r.Objects = append(r.Objects, o.Object)
		}
	}
	r.Calls = h.take()
	return r
}

// runUpstream converts one object as upstream's storage decoding does, or
// several as an UnstructuredList whose apiVersion and kind are the first
// item's (the kind admitd's errors name for a list).
func runUpstream(t *testing.T, h *hook, def *apiextensionsv1.CustomResourceDefinition, objs []*unstructured.Unstructured, to schema.GroupVersion) result {
	t.Helper()
	factory, err := upstream.NewCRConverterFactory(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	safe, _, err := factory.NewConverter(def)
	if err != nil {
		t.Fatal(err)
	}
	var r result
	if len(objs) == 1 {
		out, err := safe.ConvertToVersion(objs[0].DeepCopy(), to)
		if err != nil {
			r.Err = err.Error()
		} else {
			r.Objects = append(r.Objects, out.(*unstructured.Unstructured).Object)
		}
	} else {
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": objs[0].GetAPIVersion(), "kind": objs[0].GetKind()}}
		for _, o := range objs {
			list.Items = append(list.Items, *o.DeepCopy())
		}
		out, err := safe.ConvertToVersion(list, to)
		if err != nil {
			r.Err = err.Error()
		} else {
			for _, it := range out.(*unstructured.UnstructuredList).Items {
				r.Objects = append(r.Objects, it.Object)
			}
		}
	}
	r.Calls = h.take()
	return r
}

func compare(t *testing.T, name string, h *hook, def *apiextensionsv1.CustomResourceDefinition, objs []*unstructured.Unstructured, to schema.GroupVersion) {
	t.Helper()
	want := runUpstream(t, h, def, objs, to)
	got := runAdmitd(t, h, def, objs, to)
	want.Err, got.Err = uuidPattern.ReplaceAllString(want.Err, "UID"), uuidPattern.ReplaceAllString(got.Err, "UID")
	if len(want.Calls) == 0 && len(got.Calls) == 0 && want.Err == "" && want.Objects == nil {
		t.Errorf("%s: nothing to compare", name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: admitd differs from upstream (-upstream +admitd):\n%s", name, diff)
	}
}

func TestRequestsAndResultsAreUpstreams(t *testing.T) {
	h := &hook{answer: converted(nil)}
	srv := webhooktest.Start(t, h)
	mixed := []*unstructured.Unstructured{endpoint(gvV1, "a", nil), endpoint(gvV2, "b", nil), endpoint(gvV1, "c", map[string]any{"x": "y"})}
	for _, versions := range [][]string{{"v1"}, {"v1beta1"}, {"v1beta1", "v1"}, {"v2", "v1", "v1beta1"}} {
		def := crd(srv.URL+"/convert/path", srv.CABundle(), versions...)
		name := strings.Join(versions, ",")
		compare(t, name+" one object", h, def, mixed[:1], gvV2)
		compare(t, name+" a list", h, def, mixed, gvV2)
		compare(t, name+" nothing to convert", h, def, mixed[1:2], gvV2)
		compare(t, name+" back to v1", h, def, mixed[1:2], gvV1)
	}
	def := crd(srv.URL, srv.CABundle(), "v3")
	compare(t, "no supported review version", h, def, mixed[:1], gvV2)
	compare(t, "an invalid target version", h, crd(srv.URL, srv.CABundle(), "v1"), mixed[:1], schema.GroupVersion{Group: "stable.example.com", Version: "v9"})
	stray := endpoint(schema.GroupVersion{Group: "stable.example.com", Version: "v0"}, "s", nil)
	compare(t, "an object in an invalid version", h, crd(srv.URL, srv.CABundle(), "v1"), []*unstructured.Unstructured{stray}, gvV2)
}

func TestErrorsForBadAnswersAreUpstreams(t *testing.T) {
	setResponse := func(key string, value any) func(map[string]any) any {
		return func(review map[string]any) any {
			a := converted(nil)(review).(map[string]any)
			a["response"].(map[string]any)[key] = value
			return a
		}
	}
	meta := func(key string, value any) func(map[string]any) any {
		return converted(func(_ int, o map[string]any) { o["metadata"].(map[string]any)[key] = value })
	}
	answers := map[string]func(map[string]any) any{
		"uid mismatch":           setResponse("uid", "other"),
		"failure with message":   setResponse("result", map[string]any{"status": "Failure", "message": "cannot convert"}),
		"failure without status": setResponse("result", map[string]any{}),
		"too few objects":        setResponse("convertedObjects", []any{}),
		"no response": func(review map[string]any) any {
			return map[string]any{"apiVersion": review["apiVersion"], "kind": "ConversionReview"}
		},
		"wrong review kind": func(review map[string]any) any {
			a := converted(nil)(review).(map[string]any)
			a["kind"] = "AdmissionReview"
			return a
		},
		"review of the other version": func(review map[string]any) any {
			a := converted(nil)(review).(map[string]any)
			a["apiVersion"] = "apiextensions.k8s.io/v1beta1"
			return a
		},
		"HTTP 500":           func(map[string]any) any { return "webhook broke" },
		"wrong apiVersion":   converted(func(_ int, o map[string]any) { o["apiVersion"] = "stable.example.com/v3" }),
		"wrong kind":         converted(func(_ int, o map[string]any) { o["kind"] = "Other" }),
		"no kind":            converted(func(_ int, o map[string]any) { delete(o, "kind") }),
		"renamed":            meta("name", "x"),
		"other namespace":    meta("namespace", "x"),
		"new uid":            meta("uid", "x"),
		"metadata dropped":   converted(func(_ int, o map[string]any) { delete(o, "metadata") }),
		"metadata not a map": converted(func(_ int, o map[string]any) { o["metadata"] = "x" }),
		"invalid label":      meta("labels", map[string]any{"a b": "c"}),
		"label not a string": meta("labels", map[string]any{"a": 1}),
		"labels not a map":   meta("labels", "x"),
		"invalid annotation": meta("annotations", map[string]any{"-": "c"}),
		"labels removed":     meta("labels", nil),
		"finalizers changed": meta("finalizers", []any{"g"}),
		"second object renamed": converted(func(i int, o map[string]any) {
			if i == 1 {
				o["metadata"].(map[string]any)["name"] = "x"
			}
		}),
	}
	for name, answer := range answers {
		h := &hook{answer: answer}
		srv := webhooktest.Start(t, h)
		for _, versions := range [][]string{{"v1"}, {"v1beta1"}} {
			def := crd(srv.URL, srv.CABundle(), versions...)
			objs := []*unstructured.Unstructured{endpoint(gvV1, "a", map[string]any{"l": "1"}), endpoint(gvV1, "b", nil)}
			compare(t, name+" "+versions[0]+" one object", h, def, objs[:1], gvV2)
			compare(t, name+" "+versions[0]+" a list", h, def, objs, gvV2)
		}
	}
}

func TestUnreachableWebhookErrorIsUpstreams(t *testing.T) {
	h := &hook{answer: converted(nil)}
	srv := webhooktest.Start(t, h)
	def := crd(srv.URL+"/convert", srv.CABundle(), "v1")
	srv.Close()
	compare(t, "webhook down", h, def, []*unstructured.Unstructured{endpoint(gvV1, "a", nil)}, gvV2)
	other := webhooktest.Start(t, h)
	wrongCA := crd(other.URL+"/convert", srv.CABundle(), "v1")
	compare(t, "untrusted certificate", h, wrongCA, []*unstructured.Unstructured{endpoint(gvV1, "a", nil)}, gvV2)
}
