package apiserver

import "testing"

// A patch other than an apply must be JSON before anything reads it, and
// a custom resource names its own patch types when refusing one (answers
// of kube-apiserver 1.37.2).
func TestPatchBodyIsCheckedFirst(t *testing.T) {
	ts := newWidgetServer(t)
	ts.must(201, "POST", "/api/v1/namespaces/default/configmaps", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)
	for _, tc := range []struct {
		path, contentType, body string
		code                    int
		msg                     string
	}{
		{"/api/v1/namespaces/default/configmaps/c", mediaMergePatch, "{bad", 400, "invalid JSON patch"},
		{"/api/v1/namespaces/default/configmaps/c", mediaJSONPatch, "", 400, "invalid JSON patch"},
		{widgetsPath + "/w1", mediaMergePatch, "", 400, "invalid JSON patch"},
		{widgetsPath + "/w1/scale", mediaMergePatch, "{bad", 400, "invalid JSON patch"},
		{widgetsPath + "/w1", "text/plain", "{}", 415,
			"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"},
	} {
		checkAnswer(t, tc.contentType+" "+tc.path, ts.do("PATCH", tc.path, tc.contentType, tc.body), 200, tc.code, tc.msg, "")
	}
}

// DeleteOptions in a body are typed before they are read, as upstream's
// decoder does.
func TestDeleteOptionsBodyTypeMeta(t *testing.T) {
	ts := newWidgetServer(t)
	for _, tc := range []struct {
		body string
		code int
		msg  string
	}{
		{"{bad", 400, "couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string"},
		{`{"kind":"Pod","apiVersion":"v1"}`, 400, `no kind "Pod" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`},
	} {
		checkAnswer(t, tc.body, ts.do("DELETE", widgetsPath+"/w1", "", tc.body), 200, tc.code, tc.msg, "")
	}
	ts.must(200, "DELETE", widgetsPath+"/w1", "", `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}`)
}

// What a patch may not change, as kube-apiserver 1.37.2 answered (curl
// beside start.sh): the name (400, whatever the patch type); a custom
// resource's apiVersion and kind (its validation's 422, citing both); a
// built-in object's apiVersion and kind through a strategic merge patch,
// which upstream does not take from the patched map (200, unchanged).
func TestPatchMayNotRenameOrRetype(t *testing.T) {
	ts := newWidgetServer(t)
	const cm = "/api/v1/namespaces/default/configmaps/c"
	ts.must(201, "POST", "/api/v1/namespaces/default/configmaps", "", `{"metadata":{"name":"c"}}`)
	for _, tc := range []struct {
		path, contentType, body string
		code                    int
		msg                     string
	}{
		{cm, mediaMergePatch, `{"metadata":{"name":"other"}}`, 400, "the name of the object (other) does not match the name on the URL (c)"},
		{cm, mediaStrategicPatch, `{"metadata":{"name":"other"}}`, 400, "the name of the object (other) does not match the name on the URL (c)"},
		{cm, mediaJSONPatch, `[{"op":"replace","path":"/metadata/name","value":"x"}]`, 400, "the name of the object (x) does not match the name on the URL (c)"},
		{cm, mediaMergePatch, `{"metadata":{"name":null}}`, 400, "the name of the object (c based on URL) was undeterminable: name must be provided"},
		{cm, mediaStrategicPatch, `{"kind":"Secret","apiVersion":"v2"}`, 200, ""},
		{cm, mediaMergePatch, `{"kind":"Secret"}`, 422, "converting (v1.Secret) to (core.ConfigMap): unknown conversion"},
		{widgetsPath + "/w1", mediaMergePatch, `{"metadata":{"name":"other"}}`, 400, "the name of the object (other) does not match the name on the URL (w1)"},
		{widgetsPath + "/w1", mediaMergePatch, `{"kind":"Gadget","apiVersion":"other.io/v3"}`, 422,
			`Gadget.other.io "w1" is invalid: [kind: Invalid value: "Gadget": must be Widget, apiVersion: Invalid value: "other.io/v3": must be example.com/v1]`},
		{widgetsPath + "/w1", mediaJSONPatch, `[{"op":"replace","path":"/apiVersion","value":"example.com/v2"}]`, 422,
			`Widget.example.com "w1" is invalid: apiVersion: Invalid value: "example.com/v2": must be example.com/v1`},
	} {
		checkAnswer(t, tc.contentType+" "+tc.body, ts.do("PATCH", tc.path, tc.contentType, tc.body), 200, tc.code, tc.msg, "")
	}
	if got := ts.must(200, "GET", cm, "", ""); got.Kind != "ConfigMap" || got.APIVersion != "v1" || got.Name != "c" {
		t.Errorf("config map after the patches: %s %s %s", got.APIVersion, got.Kind, got.Name)
	}
}
