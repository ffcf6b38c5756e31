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

