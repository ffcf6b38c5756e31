package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The media checks of kube-apiserver's routes and of its errors, recorded
// side by side with kube-apiserver 1.37.2: an Accept no route media type
// matches exactly is go-restful's 406, a PATCH of no patch type its 415;
// a Status is written in the first plain clause's media type, and as
// indented JSON when no clause is plain.
func TestRouteMediaAndErrorNegotiation(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"c"}}`)
	const (
		itemMedia  = "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf"
		listMedia  = itemMedia + ", application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
		onlyMedia  = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
		notFound   = `configmaps "nope" not found`
		unknownFmt = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	)
	for _, c := range []struct {
		method, path, contentType, accept string
		code                              int
		message                           string
		form                              string // compact, indented or yaml
	}{
		{http.MethodGet, cmPath + "/c", "", "text/html", 406, itemMedia, "indented"},
		{http.MethodGet, cmPath, "", "text/html", 406, listMedia, "indented"},
		{http.MethodGet, cmPath, "", "application/*", 406, listMedia, "compact"},
		{http.MethodPatch, cmPath + "/c", "text/plain", "", 415, "415: Unsupported Media Type", "compact"},
		{http.MethodPatch, cmPath + "/c", "application/json", "", 415, "415: Unsupported Media Type", "compact"},
		{http.MethodPost, cmPath, "text/plain", "", 415, unknownFmt, "compact"},
		{http.MethodGet, cmPath + "/nope", "", "application/json;as=Table;g=meta.k8s.io;v=v1", 404, notFound, "indented"},
		{http.MethodGet, cmPath + "/nope", "", "application/yaml;as=Table;g=meta.k8s.io;v=v1", 404, notFound, "indented"},
		{http.MethodGet, cmPath + "/nope", "", "application/json;as=Table;g=meta.k8s.io;v=v1, application/json", 404, notFound, "compact"},
		{http.MethodGet, cmPath + "/nope", "", "application/yaml, application/json", 404, notFound, "yaml"},
		{http.MethodGet, cmPath + "/nope", "", "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1", 406, onlyMedia, "indented"},
	} {
		r := httptest.NewRequest(c.method, c.path, strings.NewReader("{}"))
		if c.contentType != "" {
			r.Header.Set("Content-Type", c.contentType)
		}
		if c.accept != "" {
			r.Header.Set("Accept", c.accept)
		}
		w := httptest.NewRecorder()
		ts.s.ServeHTTP(w, r)
		body := w.Body.String()
		var st metav1.Status
		if c.form == "yaml" {
			if w.Code != c.code || !strings.Contains(body, "message: "+c.message) {
				t.Errorf("%s %s (%s) = %d %q, want %d in YAML: %q", c.method, c.path, c.accept, w.Code, body, c.code, c.message)
			}
			continue
		}
		form := "compact"
		if strings.HasPrefix(body, "{\n  ") {
			form = "indented"
		}
		if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || w.Code != c.code || st.Message != c.message || form != c.form {
			t.Errorf("%s %s (%s %s) = %d %s %q, want %d %s %q", c.method, c.path, c.contentType, c.accept, w.Code, form, st.Message, c.code, c.form, c.message)
		}
		if c.code == 415 && strings.HasPrefix(c.message, "the body") && st.Details != nil {
			t.Errorf("%s %s: the 415 has details %+v, want none (upstream's negotiation error)", c.method, c.path, st.Details)
		}
	}
}
