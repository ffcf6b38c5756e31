package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// List, watch and get parameters are answered as the real kube-apiserver
// 1.37.2 answered them (recorded with test/sidebyside-probes.sh): the
// parameter codec's 400s, ListOptions validation's 422s, storage's
// resourceVersion and continue errors, the export parameter.
func TestListParametersAnswerAsUpstream(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"target"}}`)
	const (
		rvGarbage = `resourceVersion: Invalid value: \"garbage\": strconv.ParseUint: parsing \"garbage\": invalid syntax`
		listOpts  = `ListOptions.meta.k8s.io \"\" is invalid: `
	)
	for _, tc := range []struct {
		query, path string
		code        int
		message     string
	}{
		{query: "?resourceVersion=garbage", code: 400, message: `invalid resource version: ` + rvGarbage},
		{query: "?resourceVersion=99999999999999999999", code: 400, message: `invalid resource version: resourceVersion: Invalid value: \"99999999999999999999\": strconv.ParseUint: parsing \"99999999999999999999\": value out of range`},
		{query: "?watch=1&resourceVersion=garbage", code: 500, message: rvGarbage},
		{query: "?resourceVersionMatch=bogus", code: 422, message: listOpts + `[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Unsupported value: \"bogus\": supported values: \"Exact\", \"NotOlderThan\", \"\"]`},
		{query: "?resourceVersion=0&resourceVersionMatch=Exact", code: 422, message: listOpts + `resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"`},
		{query: "?watch=1&resourceVersionMatch=NotOlderThan", code: 422, message: listOpts + `resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`},
		{query: "?sendInitialEvents=garbage", code: 422, message: listOpts + `sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`},
		{query: "?watch=1&continue=garbage", code: 422, message: listOpts + `resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided`},
		{query: "?timeoutSeconds=garbage", code: 400, message: `strconv.ParseInt: parsing \"garbage\": invalid syntax`},
		{query: "?limit=99999999999999999999", code: 400, message: `strconv.ParseInt: parsing \"99999999999999999999\": value out of range`},
		{query: "?limit=-1", code: 200},
		{query: "?continue=garbage", code: 400, message: `invalid continue token: continue key is not valid: invalid character '\\u0081' looking for beginning of value`},
		{query: "?continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIuLi8uLi8ifQ", code: 400, message: `invalid continue token: continue key is not valid: ../../`},
		{query: "?labelSelector=a%20in%20(", code: 400, message: `unable to parse requirement: found '', expected: ',', ')' or identifier`},
		{query: "?fieldSelector=bogus.field=x", code: 400, message: `\"bogus.field\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"`},
		{query: "?fieldSelector=metadata.name%3D%3D%3Dx", code: 400, message: `invalid field selector: unescaped character in value: 61`},
		{path: cmPath + "/target", query: "?export=true", code: 400, message: `the export parameter, deprecated since v1.14, is no longer supported`},
		{path: cmPath + "/target", query: "?resourceVersion=garbage", code: 500, message: rvGarbage},
		{path: cmPath + "/target", query: "?watch=true", code: 200},
	} {
		path := cmPath
		if tc.path != "" {
			path = tc.path
		}
		w := ts.do("GET", path+tc.query, "", "")
		if w.Code != tc.code || tc.message != "" && !strings.Contains(w.Body.String(), `"message":"`+tc.message+`"`) {
			t.Errorf("GET %s%s = %d %.400s, want %d %s", path, tc.query, w.Code, w.Body, tc.code, tc.message)
		}
	}
}

// A watch from "" or "0" starts with the current state; one that asks for
// initial events with bookmarks ends them with upstream's
// initial-events-end bookmark; a negative timeoutSeconds ends it at once;
// the deprecated /watch/ prefix watches as well, GET only.
func TestWatchParameters(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"target"}}`)
	events := func(path string) []string {
		w := watchFor(ts, path, 300*time.Millisecond)
		var types []string
		for _, line := range strings.Split(strings.TrimSpace(w), "\n") {
			var ev struct{ Type string }
			if json.Unmarshal([]byte(line), &ev) == nil {
				types = append(types, ev.Type)
			}
		}
		return types
	}
	for path, want := range map[string]string{
		cmPath + "?watch=1":                                                           "ADDED",
		cmPath + "?watch=1&allowWatchBookmarks=1":                                     "ADDED BOOKMARK",
		cmPath + "?watch=1&timeoutSeconds=-1":                                         "ERROR",
		"/api/v1/watch/namespaces/default/configmaps":                                 "ADDED",
		cmPath + "?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan": "",
	} {
		if got := strings.Join(events(path), " "); got != want {
			t.Errorf("watch %s: events %q, want %q", path, got, want)
		}
	}
	if w := ts.do("POST", "/api/v1/watch/namespaces/default/configmaps", mediaJSON, `{}`); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST to a /watch/ path = %d, want 405", w.Code)
	}
}

// watchFor runs a watch for d and returns what it wrote.
func watchFor(ts *testServer, path string, d time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	w := httptest.NewRecorder()
	ts.s.ServeHTTP(w, httptest.NewRequest("GET", path, nil).WithContext(ctx))
	return w.Body.String()
}

// A name in the URL that cannot be a path segment is upstream's 400 on
// every verb that reads or writes that object.
func TestPathNames(t *testing.T) {
	ts := newTestServer(t)
	const want = `"message":"Name parameter invalid: \"..\": may not be '..'"`
	for _, method := range []string{"GET", "DELETE", "PUT", "PATCH"} {
		w := ts.do(method, cmPath+"/..", mediaMergePatch, `{}`)
		if w.Code != 400 || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s %s/.. = %d %.200s, want 400 %s", method, cmPath, w.Code, w.Body, want)
		}
	}
	w := ts.do("GET", cmPath+"/a%25b", "", "")
	if w.Code != 400 || !strings.Contains(w.Body.String(), `may not contain '%'`) {
		t.Errorf("GET a name with %% = %d %.200s, want 400", w.Code, w.Body)
	}
}

// A create body that does not decode is answered as the real
// kube-apiserver 1.37.2 answered it (test/sidebyside-probes.sh).
func TestUndecodableBodiesAnswerAsUpstream(t *testing.T) {
	ts := newTestServer(t)
	const unrecognized = `the object provided is unrecognized (must be of type ConfigMap): `
	for _, tc := range []struct{ contentType, body, message string }{
		{mediaJSON, `{`, unrecognized + `couldn't get version/kind; json parse error: unexpected end of JSON input ({)`},
		{mediaJSON, ``, unrecognized + `couldn't get version/kind; json parse error: unexpected end of JSON input (\u003cempty\u003e)`},
		{mediaJSON, `[1]`, unrecognized + `couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" } (5b315d)`},
		{mediaJSON, `{"metadata":{"name":"t3"},"data":{"a":1}}`, `ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`},
		{mediaJSON, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"t2"}}`, `Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`},
		// a kind no version of which upstream's scheme knows, and one it knows
		{mediaJSON, `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"t4"}}`, `ConfigMap in version \"v2\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"v2\" in scheme \"pkg/runtime/scheme.go:111\"`},
		{mediaJSON, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"t5"}}`, `Deployment in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Deployment) to (core.ConfigMap): unknown conversion`},
		{mediaProtobuf, `{}`, unrecognized + `provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({})`},
		{mediaYAML, "metadata:\n\tname: x", unrecognized + `yaml: line 2: found character that cannot start any token (6d657461646174613a0a096e616d653a2078)`},
	} {
		w := ts.do("POST", cmPath, tc.contentType, tc.body)
		if w.Code != 400 || !strings.Contains(w.Body.String(), `"message":"`+tc.message+`"`) {
			t.Errorf("POST %q = %d %.400s, want 400 %s", tc.body, w.Code, w.Body, tc.message)
		}
	}
	ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"patched"}}`)
	w := ts.do("PATCH", cmPath+"/patched", mediaJSONPatch, `{}`)
	const notOps = `error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp`
	if w.Code != 400 || !strings.Contains(w.Body.String(), `"message":"`+notOps+`"`) {
		t.Errorf("a JSON patch that is not a list = %d %.400s, want 400 %s", w.Code, w.Body, notOps)
	}
	// to apps/v1 deployments: another registered version of the kind, one
	// not registered, another kind (recorded)
	for _, tc := range []struct{ apiVersion, kind, message string }{
		{"apps/v1beta1", "Deployment", `the API version in the data (apps/v1beta1) does not match the expected API version (apps/v1)`},
		{"extensions/v1beta1", "Deployment", `the API version in the data (extensions/v1beta1) does not match the expected API version (apps/v1)`},
		{"v1", "Deployment", `Deployment in version \"v1\" cannot be handled as a Deployment: no kind \"Deployment\" is registered for version \"v1\" in scheme \"pkg/runtime/scheme.go:111\"`},
		{"apps/v1", "StatefulSet", `StatefulSet in version \"v1\" cannot be handled as a Deployment: converting (v1.StatefulSet) to (apps.Deployment): unknown conversion`},
	} {
		body := `{"apiVersion":"` + tc.apiVersion + `","kind":"` + tc.kind + `","metadata":{"name":"t6"}}`
		w := ts.do("POST", "/apis/apps/v1/namespaces/default/deployments", mediaJSON, body)
		if w.Code != 400 || !strings.Contains(w.Body.String(), `"message":"`+tc.message+`"`) {
			t.Errorf("POST %s to deployments = %d %.400s, want 400 %s", body, w.Code, w.Body, tc.message)
		}
	}
}
