package apiserver

import (
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
		w := ts.do("POST", doohickeysPath+tc.query, "", tc.body)
		msg := ""
		if w.Code != 201 {
			_, msg = statusMessage(t, w.Body.Bytes())
		}
		if w.Code != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: POST = %d %q, want %d %q", tc.name, w.Code, msg, tc.code, tc.msg)
		}
		warnings, _ := utilnet.ParseWarningHeaders(w.Result().Header.Values("Warning"))
		var texts []string
		for _, wh := range warnings {
			texts = append(texts, wh.Text)
		}
		if got := strings.Join(texts, "\n"); got != tc.warning {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.warning)
		}
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
