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
