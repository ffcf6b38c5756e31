package apiserver

import (
	"strings"
	"testing"
)

// A repeated key in a built-in object's body is a strict decoding error,
// as upstream's strict serializer reports it: a warning by default, a 400
// under Strict; for YAML, the strict converter's error comes first.
func TestBuiltinBodiesReportDuplicateFields(t *testing.T) {
	ts := newTestServer(t)
	const path = "/api/v1/namespaces/default/configmaps"
	jsonBody := func(name string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"a":"1"},"data":{"b":"2"},"bogus":1}`
	}
	yamlBody := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  a: \"1\"\ndata:\n  b: \"2\"\n"
	}
	const yamlDup = `yaml: unmarshal errors:
  line 8: key "data" already set in map`
	for _, tc := range []struct {
		name, query, contentType, body string
		code                           int
		msg, warnings                  string
	}{
		{"json warn", "", "", jsonBody("j1"), 201, "", `duplicate field "data"` + "\n" + `unknown field "bogus"`},
		{"json strict", "?fieldValidation=Strict", "", jsonBody("j2"), 400,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data", unknown field "bogus"`, ""},
		{"json ignore", "?fieldValidation=Ignore", "", jsonBody("j3"), 201, "", ""},
		// One warning per line of the YAML error, as upstream.
		{"yaml warn", "", mediaYAML, yamlBody("y1"), 201, "", `line 8: key "data" already set in map`},
		{"yaml strict", "?fieldValidation=Strict", mediaYAML, yamlBody("y2"), 400, "strict decoding error: " + yamlDup, ""},
	} {
		checkAnswer(t, tc.name, ts.do("POST", path+tc.query, tc.contentType, tc.body), 201, tc.code, tc.msg, tc.warnings)
	}
	// The decoder (upstream's too) decodes a repeated object into the first.
	if got := ts.do("GET", path+"/j1", "", "").Body.String(); !strings.Contains(got, `"data":{"a":"1","b":"2"}`) {
		t.Errorf("stored j1 = %s, want both data decoded", got)
	}
}

// A server-side apply with a repeated YAML key warns once per line of the
// error, as upstream.
func TestApplyWarnsAboutRepeatedYAMLKeys(t *testing.T) {
	ts := newTestServer(t)
	body := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: \"1\"\ndata:\n  b: \"2\"\n"
	w := ts.do("PATCH", "/api/v1/namespaces/default/configmaps/a?fieldManager=m", mediaApplyPatch, body)
	if got := warningTexts(w); w.Code != 201 || got != `line 8: key "data" already set in map` {
		t.Errorf("apply with a repeated key = %d, warnings %q", w.Code, got)
	}
}
