package apiserver

import (
	"strings"
	"testing"
)

// Patches are decoded strictly as upstream's patch handler decodes them:
// the patch's own repeated keys (and a JSON patch's unknown operation
// fields) first, then the patched object's unknown fields; warnings under
// Warn, a 422 on "patch" under Strict, nothing under Ignore.
func TestPatchFieldValidation(t *testing.T) {
	ts := newTestServer(t)
	const path = "/api/v1/namespaces/default/configmaps/c"
	ts.must(201, "POST", "/api/v1/namespaces/default/configmaps", "", `{"metadata":{"name":"c"},"data":{"a":"1"}}`)
	for _, tc := range []struct {
		name, query, contentType, body string
		code                           int
		msg, warnings                  string
	}{
		{"smp warn", "?fieldValidation=Warn", mediaStrategicPatch, `{"bogus":1,"data":{"b":"2"},"data":{"c":"3"}}`, 200, "",
			`duplicate field "data"` + "\n" + `unknown field "bogus"`},
		{"smp strict", "?fieldValidation=Strict", mediaStrategicPatch, `{"bogus":1}`, 422,
			` "" is invalid: patch: Invalid value: "map[bogus:1]": strict decoding error: unknown field "bogus"`, ""},
		{"smp ignore", "?fieldValidation=Ignore", mediaStrategicPatch, `{"bogus":1}`, 200, "", ""},
		{"smp default is warn", "", mediaStrategicPatch, `{"bogus":1}`, 200, "", `unknown field "bogus"`},
		{"merge warn", "?fieldValidation=Warn", mediaMergePatch, `{"data":{"d":"4"},"data":{"e":"5"}}`, 200, "", `duplicate field "data"`},
		{"json patch warn", "?fieldValidation=Warn", mediaJSONPatch, `[{"op":"add","path":"/data/f","value":"6","extra":1}]`, 200, "",
			`json patch unknown field "[0].extra"`},
		{"json patch strict", "?fieldValidation=Strict", mediaJSONPatch, `[{"op":"add","path":"/bogus","value":1}]`, 422,
			`strict decoding error: unknown field "bogus"`, ""},
		{"json patch fails", "", mediaJSONPatch, `[{"op":"remove","path":"/nope"}]`, 422,
			"the server rejected our request due to an error in our request", ""},
	} {
		checkAnswer(t, tc.name, ts.do("PATCH", path+tc.query, tc.contentType, tc.body), 200, tc.code, tc.msg, tc.warnings)
	}
}

// A Scale body is decoded as upstream's update handler decodes it:
// case-sensitively and strictly by fieldValidation; its patches too.
func TestScaleBodiesAreDecodedStrictly(t *testing.T) {
	ts := newTestServer(t)
	const deployPath = "/apis/apps/v1/namespaces/default/deployments/web"
	ts.must(201, "POST", "/apis/apps/v1/namespaces/default/deployments", "", `{"metadata":{"name":"web"},"spec":{"replicas":2,
	  "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	scale := func(spec string) string {
		return `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":"default"},"spec":` + spec + `}`
	}
	if w := ts.do("PUT", deployPath+"/scale?fieldValidation=Strict", "", scale(`{"Replicas":5}`)); w.Code != 400 ||
		!strings.Contains(w.Body.String(), `Scale in version \"v1\" cannot be handled as a Scale: strict decoding error: unknown field \"spec.Replicas\"`) {
		t.Errorf("strict PUT scale with spec.Replicas = %d %s, want 400", w.Code, w.Body)
	}
	w := ts.do("PUT", deployPath+"/scale", "", scale(`{"Replicas":5}`))
	if w.Code != 200 || !strings.Contains(w.Header().Get("Warning"), `unknown field \"spec.Replicas\"`) || !strings.Contains(w.Body.String(), `"spec":{}`) {
		t.Errorf("PUT scale with spec.Replicas = %d %s (warning %q), want replicas 0 and a warning", w.Code, w.Body, w.Header().Get("Warning"))
	}
	if w := ts.do("PATCH", deployPath+"/scale?fieldValidation=Strict", mediaMergePatch, `{"spec":{"replicas":3,"bogus":1}}`); w.Code != 422 ||
		!strings.Contains(w.Body.String(), `strict decoding error: unknown field \"spec.bogus\"`) {
		t.Errorf("strict merge patch of scale with spec.bogus = %d %s, want 422", w.Code, w.Body)
	}
}

// A strategic merge that fails answers as upstream's: its own format
// errors 400 or 422, anything else 500.
func TestStrategicMergePatchErrors(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "POST", "/apis/apps/v1/namespaces/default/deployments", "", `{"metadata":{"name":"web"},"spec":{
	  "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	const path = "/apis/apps/v1/namespaces/default/deployments/web"
	for _, tc := range []struct {
		patch string
		code  int
	}{
		{`{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":{"maxSurge":1}}}}`, 400}, // invalid patch format of retainKeys
		{`{"spec":{"template":{"$patch":"bogus"}}}`, 500},
	} {
		if w := ts.do("PATCH", path, mediaStrategicPatch, tc.patch); w.Code != tc.code {
			t.Errorf("PATCH %s = %d %s, want %d", tc.patch, w.Code, w.Body, tc.code)
		}
	}
}
