package apiserver

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// scaledWidgetCRD serves a namespaced Widget with status and scale subresources,
// the custom resource of the HTTP edge-case tests below (walked against
// kube-apiserver 1.37.2).
const scaledWidgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}},
"schema":{"openAPIV3Schema":{"type":"object","properties":{
"spec":{"type":"object","properties":{"size":{"type":"string"},"replicas":{"type":"integer"}}},
"status":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}}}]}}`

const widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"

func widget(name string) string {
	return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name + `"},"spec":{"size":"big","replicas":2}}`
}

// newWidgetServer is a test server with scaledWidgetCRD and the Widget w1.
func newWidgetServer(t *testing.T) *testServer {
	ts := newTestServer(t)
	ts.must(201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", scaledWidgetCRD)
	ts.must(201, "POST", widgetsPath, "", widget("w1"))
	return ts
}

// A custom resource's update, of the object or its status, must name the
// resourceVersion it replaces: upstream's strategies do not allow an
// unconditional update (kube-apiserver answers a PUT without one 422).
func TestCustomResourceUpdateNeedsResourceVersion(t *testing.T) {
	ts := newWidgetServer(t)
	const msg = `widgets.example.com "w1" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`
	for _, path := range []string{widgetsPath + "/w1", widgetsPath + "/w1/status"} {
		checkAnswer(t, "PUT "+path, ts.do("PUT", path, "", widget("w1")), 200, 422, msg, "")
	}
	rv := ts.must(200, "GET", widgetsPath+"/w1", "", "").ResourceVersion
	withRV := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","resourceVersion":"` + rv + `"},"spec":{"size":"small"}}`
	ts.must(200, "PUT", widgetsPath+"/w1", "", withRV)
	// the Scale of a custom resource takes the stored resourceVersion
	ts.must(200, "PUT", widgetsPath+"/w1/scale", "", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w1"},"spec":{"replicas":4}}`)
}

// A custom resource's paths are apiextensions-apiserver's: it dispatches on
// the verb, not on a route table (answers of kube-apiserver 1.37.2).
func TestCustomResourceRoutes(t *testing.T) {
	ts := newWidgetServer(t)
	ts.must(201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", strictGadgetCRD)
	const (
		item     = widgetsPath + "/w1"
		notFound = "404 page not found\n"
	)
	for _, tc := range []struct {
		method, path, body string
		code               int
		answer             string // the Status message, or the page
	}{
		{"HEAD", widgetsPath, "", 200, ""},
		{"HEAD", item + "/status", "", 200, ""},
		{"OPTIONS", item, "", 405, ` is not supported on resources of kind "widgets.example.com"`},
		{"DELETE", item + "/status", "", 405, `delete is not supported on resources of kind "widgets.example.com"`},
		{"POST", item + "/scale", "{}", 405, `create is not supported on resources of kind "widgets.example.com"`},
		{"POST", item + "/status/extra", "{}", 405, `create is not supported on resources of kind "widgets.example.com"`},
		{"GET", item + "/status/extra", "", 200, ""},
		{"GET", item + "/nope", "", 404, `widgets.example.com "w1" not found`},
		{"PUT", widgetsPath, widget("w1"), 400, "name must be provided"},
		{"PATCH", widgetsPath, "{}", 400, "name must be provided"},
		{"POST", item, widget("w2"), 201, ""}, // a create, whatever the name in the path
		{"GET", "/apis/example.com/v1/widgets", "", 200, ""},
		{"POST", "/apis/example.com/v1/widgets", widget("w3"), 404, notFound},
		{"DELETE", "/apis/example.com/v1/widgets", "", 404, notFound},
		{"GET", "/apis/example.com/v1/widgets/w1", "", 404, notFound},
		{"GET", "/apis/example.com/v1/namespaces/default/nopes", "", 404, notFound},
		{"GET", "/apis/example.com/v9/namespaces/default/widgets", "", 404, notFound},
		{"GET", "/apis/example.com/v9", "", 404, notFound},
		{"GET", "/apis/example.com/v1/namespaces/default/doohickeys/d/status", "", 404, `doohickeys.example.com "d" not found`},
	} {
		ct := ""
		if tc.method == "PATCH" {
			ct = mediaMergePatch
		}
		w := ts.do(tc.method, tc.path, ct, tc.body)
		got := w.Body.String()
		if tc.code >= 400 && tc.answer != notFound {
			_, got = statusMessage(t, w.Body.Bytes())
		}
		if w.Code != tc.code || (tc.answer != "" && got != tc.answer) {
			t.Errorf("%s %s = %d %q, want %d %q", tc.method, tc.path, w.Code, got, tc.code, tc.answer)
		}
	}
}

// A custom resource's list names its continue token even when it is empty,
// as upstream's unstructured lists do; a built-in list leaves it out.
func TestCustomResourceListContinue(t *testing.T) {
	ts := newWidgetServer(t)
	ts.must(201, "POST", widgetsPath, "", widget("w2"))
	for _, tc := range []struct{ path, want string }{
		{widgetsPath, `"metadata":{"continue":"","resourceVersion":"`},
		{"/apis/example.com/v1/namespaces/other/widgets", `"metadata":{"continue":"","resourceVersion":"`},
		{widgetsPath + "?limit=1", `"metadata":{"continue":"ey`},
		{widgetsPath + "?limit=5", `"metadata":{"continue":"","resourceVersion":"`},
		{"/api/v1/namespaces/default/configmaps", `"metadata":{"resourceVersion":"`},
	} {
		if got := ts.do("GET", tc.path, "", "").Body.String(); !strings.Contains(got, tc.want) {
			t.Errorf("GET %s = %s, want %s", tc.path, got, tc.want)
		}
	}
	r := httptest.NewRequest("GET", widgetsPath, nil)
	r.Header.Set("Accept", mediaYAML)
	w := httptest.NewRecorder()
	ts.s.ServeHTTP(w, r)
	if got := w.Body.String(); !strings.Contains(got, "metadata:\n  continue: \"\"\n  resourceVersion:") {
		t.Errorf("GET %s in YAML = %s, want an empty continue", widgetsPath, got)
	}
	if got := ts.do("DELETE", widgetsPath, "", "").Body.String(); !strings.Contains(got, `"metadata":{"continue":"","resourceVersion":"`) {
		t.Errorf("DELETE %s = %s, want an empty continue", widgetsPath, got)
	}
}

// A write of a custom resource's status keeps nothing of the metadata it
// sends, and its manager owns none of it (upstream's status strategy
// resets metadata and spec).
func TestCustomResourceStatusManagesNoMetadata(t *testing.T) {
	ts := newWidgetServer(t)
	w := ts.do("PATCH", widgetsPath+"/w1/status?fieldManager=st", mediaMergePatch, `{"metadata":{"labels":{"a":"b"}},"status":{"replicas":1}}`)
	got := w.Body.String()
	if w.Code != 200 || strings.Contains(got, `"labels"`) || strings.Contains(got, `"f:labels"`) || !strings.Contains(got, `"f:status":{".":{},"f:replicas":{}}`) {
		t.Errorf("status patch with labels = %d %s, want 200 without labels, st managing status only", w.Code, got)
	}
}

// A custom resource's body is decoded without help from the URL, as
// upstream's unstructured decoder does (answers of kube-apiserver 1.37.2).
func TestCustomResourceBodyTypeMeta(t *testing.T) {
	ts := newWidgetServer(t)
	for _, tc := range []struct {
		name, body string
		code       int
		msg        string
	}{
		{"no kind", `{"apiVersion":"example.com/v1","metadata":{"name":"w2"}}`, 400,
			`the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{"apiVersion":"example.com/v1","metadata":{"name":"w2"}}' ({"apiVersion":"example.com/v1" ...)`},
		{"array", `[]`, 400, `the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct`},
		{"null", `null`, 400, `the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in 'null' (6e756c6c)`},
		{"no apiVersion", `{"kind":"Widget","metadata":{"name":"w2"}}`, 400,
			`the API version in the data () does not match the expected API version (example.com/v1)`},
		{"other kind", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"w2"}}`, 422,
			`Gadget.example.com "w2" is invalid: kind: Invalid value: "Gadget": must be Widget`},
		{"list kind", `{"apiVersion":"example.com/v1","kind":"WidgetList","items":[]}`, 422,
			`WidgetList.example.com "" is invalid: kind: Invalid value: "WidgetList": must be Widget`},
	} {
		checkAnswer(t, tc.name, ts.do("POST", widgetsPath, "", tc.body), 201, tc.code, tc.msg, "")
	}
}

// In a meta.k8s.io/v1beta1 Table, the metadata each row carries is of
// v1beta1 too, as kube-apiserver converts the whole table.
func TestTableV1beta1RowsAreV1beta1(t *testing.T) {
	ts := newWidgetServer(t)
	for _, path := range []string{widgetsPath, widgetsPath + "/w1", "/api/v1/namespaces"} {
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Accept", "application/json;as=Table;v=v1beta1;g=meta.k8s.io")
		w := httptest.NewRecorder()
		ts.s.ServeHTTP(w, r)
		got := w.Body.String()
		if w.Code != 200 || strings.Contains(got, `"apiVersion":"meta.k8s.io/v1"`) || !strings.Contains(got, `"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1beta1"`) {
			t.Errorf("GET %s as a v1beta1 Table = %d %s, want rows of v1beta1 metadata", path, w.Code, got)
		}
	}
}

// A watch answered as a Table carries each object's metadata in its rows,
// unless includeObject=Object asks for the whole object, as upstream's.
func TestWatchTableRowsCarryMetadata(t *testing.T) {
	ts := newWidgetServer(t)
	for query, want := range map[string]string{
		"":                      `"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1"`,
		"&includeObject=Object": `"object":{"apiVersion":"example.com/v1","kind":"Widget"`,
	} {
		r := httptest.NewRequest("GET", widgetsPath+"?watch=1&timeoutSeconds=1"+query, nil)
		r.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		w := httptest.NewRecorder()
		ts.s.ServeHTTP(w, r)
		if got := w.Body.String(); !strings.Contains(got, want) {
			t.Errorf("watch as a Table%s = %s, want rows with %s", query, got, want)
		}
	}
}

// A custom resource of another kind is refused by the resource's
// validation, after the update's resourceVersion checks, as upstream's
// store orders them (answers of kube-apiserver 1.37.2): a PUT without a
// resourceVersion is told it needs one, one with a stale resourceVersion
// is a conflict, and only a current one hears of the kind.
func TestCustomResourceOfAnotherKindAfterResourceVersionChecks(t *testing.T) {
	ts := newWidgetServer(t)
	gadget := func(rv string) string {
		return `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"w1","resourceVersion":"` + rv + `"},"spec":{}}`
	}
	path := widgetsPath + "/w1"
	checkAnswer(t, "no resourceVersion", ts.do("PUT", path, "", gadget("")), 200, 422,
		`widgets.example.com "w1" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`, "")
	checkAnswer(t, "stale resourceVersion", ts.do("PUT", path, "", gadget("1")), 200, 409,
		`Operation cannot be fulfilled on widgets.example.com "w1": the object has been modified`, "")
	rv := ts.must(200, "GET", path, "", "").ResourceVersion
	checkAnswer(t, "current resourceVersion", ts.do("PUT", path, "", gadget(rv)), 200, 422,
		`Gadget.example.com "w1" is invalid: kind: Invalid value: "Gadget": must be Widget`, "")
}
