package apiserver

import (
	"net/http/httptest"
	"strings"
	"testing"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

const strictGadgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"doohickeys.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"doohickeys","singular":"doohickey","kind":"Doohickey","listKind":"DoohickeyList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
"spec":{"type":"object","properties":{"size":{"type":"integer","default":3},"mode":{"type":"string","enum":["a","b"]}}}}}}}]}}`

const doohickeysPath = "/apis/example.com/v1/namespaces/default/doohickeys"

func TestCustomResourceFieldValidation(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", strictGadgetCRD)
	body := func(name, spec string) string {
		return `{"apiVersion":"example.com/v1","kind":"Doohickey","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
	}
	for _, tc := range []struct {
		name, query, body string
		code              int
		msg, warning      string
	}{
		{"strict", "?fieldValidation=Strict", body("s", `{"foo":1}`), 400,
			`Doohickey in version "v1" cannot be handled as a Doohickey: strict decoding error: unknown field "spec.foo"`, ""},
		{"strict duplicate and unknown metadata", "?fieldValidation=Strict",
			`{"apiVersion":"example.com/v1","kind":"Doohickey","metadata":{"name":"d","bogus":1},"spec":{"size":1,"size":2}}`, 400,
			`strict decoding error: duplicate field "spec.size", unknown field "metadata.bogus"`, ""},
		{"warn", "?fieldValidation=Warn", body("w", `{"foo":1}`), 201, "", `unknown field "spec.foo"`},
		{"ignore", "?fieldValidation=Ignore", body("i", `{"foo":1}`), 201, "", ""},
		{"invalid", "", body("x", `{"mode":"c"}`), 422, `spec.mode: Unsupported value: "c": supported values: "a", "b"`, ""},
	} {
		checkAnswer(t, tc.name, ts.do("POST", doohickeysPath+tc.query, "", tc.body), 201, tc.code, tc.msg, tc.warning)
	}
	got := ts.do("GET", doohickeysPath+"/w", "", "").Body.String()
	if !strings.Contains(got, `"spec":{"size":3}`) {
		t.Errorf("stored doohickey = %s, want the unknown field pruned and size defaulted", got)
	}
	// As upstream's patch handler: a 422 on "patch", whose value is the
	// patched object.
	w := ts.do("PATCH", doohickeysPath+"/w?fieldValidation=Strict", mediaMergePatch, `{"spec":{"bar":true}}`)
	if _, msg := statusMessage(t, w.Body.Bytes()); w.Code != 422 || !strings.HasPrefix(msg, ` "" is invalid: patch: Invalid value: "{\"apiVersion\"`) ||
		!strings.HasSuffix(msg, `\"spec\":{\"bar\":true,\"size\":3}}": strict decoding error: unknown field "spec.bar"`) {
		t.Errorf("strict merge patch with an unknown field = %d %s, want 422", w.Code, msg)
	}
}

// checkAnswer fails the test unless w answered code, with a Status whose
// message holds msg when the code is not success, and exactly warnings
// (one per line).
func checkAnswer(t *testing.T, name string, w *httptest.ResponseRecorder, success, code int, msg, warnings string) {
	t.Helper()
	got := ""
	if w.Code != success {
		_, got = statusMessage(t, w.Body.Bytes())
	}
	if w.Code != code || !strings.Contains(got, msg) {
		t.Errorf("%s: answer %d %q, want %d %q", name, w.Code, got, code, msg)
	}
	if texts := warningTexts(w); texts != warnings {
		t.Errorf("%s: warnings %q, want %q", name, texts, warnings)
	}
}

// warningTexts is the text of each Warning header, one per line.
func warningTexts(w *httptest.ResponseRecorder) string {
	warnings, _ := utilnet.ParseWarningHeaders(w.Result().Header.Values("Warning"))
	texts := make([]string, 0, len(warnings))
	for _, wh := range warnings {
		texts = append(texts, wh.Text)
	}
	return strings.Join(texts, "\n")
}

// A custom resource's name is a DNS subdomain, as upstream's custom
// resource validator says: no uppercase, at most 253 characters.
func TestCustomResourceNames(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", strictGadgetCRD)
	body := func(name string) string {
		return `{"apiVersion":"example.com/v1","kind":"Doohickey","metadata":{"name":"` + name + `"},"spec":{}}`
	}
	for name, want := range map[string]string{
		"Upper":                  `metadata.name: Invalid value: "Upper": a lowercase RFC 1123 subdomain must consist of`,
		strings.Repeat("a", 254): `must be no more than 253 characters`,
	} {
		checkAnswer(t, name[:5], ts.do("POST", doohickeysPath, "", body(name)), 201, 422, want, "")
	}
	checkAnswer(t, "253", ts.do("POST", doohickeysPath, "", body(strings.Repeat("a", 253))), 201, 201, "", "")
}

// A custom resource's field selectors are those upstream's converter
// allows: metadata.name, metadata.namespace (namespaced kinds) and the
// version's selectableFields.
func TestCustomResourceFieldSelectors(t *testing.T) {
	ts := newTestServer(t)
	crd := strings.Replace(strictGadgetCRD, `"served":true,`, `"served":true,"selectableFields":[{"jsonPath":".spec.mode"}],`, 1)
	ts.must(201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", crd)
	for name, mode := range map[string]string{"x": "a", "y": "b"} {
		ts.must(201, "POST", doohickeysPath, "", `{"apiVersion":"example.com/v1","kind":"Doohickey","metadata":{"name":"`+name+`"},"spec":{"mode":"`+mode+`"}}`)
	}
	for query, want := range map[string]string{
		"spec.mode%3Db":                `"name":"y"`,
		"metadata.name%3Dx":            `"name":"x"`,
		"metadata.namespace%3Ddefault": `"name":"x"`,
	} {
		if w := ts.do("GET", doohickeysPath+"?fieldSelector="+query, "", ""); w.Code != 200 || !strings.Contains(w.Body.String(), want) {
			t.Errorf("fieldSelector=%s = %d %.300s, want 200 with %s", query, w.Code, w.Body, want)
		}
	}
	checkAnswer(t, "unselectable", ts.do("GET", doohickeysPath+"?fieldSelector=spec.size%3D3", "", ""), 200, 400, "field label not supported: spec.size", "")
}
