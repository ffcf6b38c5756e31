package apiserver

import (
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The media type of a plain answer, as kube-apiserver 1.37.2 chose it for
// GET /api/v1/namespaces/default and for the 404 of a missing namespace
// (curl beside start.sh): clauses by q (q=0 included, q>1 first), then
// the more specific; a conversion clause passed over; JSON when nothing
// matches.
func TestObjectMedia(t *testing.T) {
	for _, tc := range []struct {
		accept      string
		hasProtobuf bool
		want        string
	}{
		{"application/vnd.kubernetes.protobuf,application/json", true, mediaProtobuf},
		{"application/vnd.kubernetes.protobuf, */*", true, mediaProtobuf},
		{"application/vnd.kubernetes.protobuf, */*", false, mediaJSON},
		{"application/vnd.kubernetes.protobuf, application/yaml", false, mediaYAML},
		{"application/json, application/vnd.kubernetes.protobuf", true, mediaJSON},
		{"application/json;q=0.5, application/vnd.kubernetes.protobuf", true, mediaProtobuf},
		{"application/vnd.kubernetes.protobuf;q=0.5, application/json", true, mediaJSON},
		{"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json", true, mediaJSON},
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json", true, mediaJSON},
		{"application/vnd.kubernetes.protobuf;q=0", true, mediaProtobuf},
		{" application/vnd.kubernetes.protobuf , application/json;q=0.9", true, mediaProtobuf},
		{"application/vnd.kubernetes.protobuf, application/json;q=2", true, mediaJSON},
		{"text/plain;x, application/vnd.kubernetes.protobuf", true, mediaProtobuf},
		{"application/json;q=0, application/yaml", true, mediaYAML},
		{"*/*, application/yaml", true, mediaYAML},
		{"application/yaml;as=Table;g=meta.k8s.io;v=v1, application/json", true, mediaJSON},
		{"application/yaml;q=0.5, application/vnd.kubernetes.protobuf;q=0.4", true, mediaYAML},
		{"text/html", true, mediaJSON},
		{"", true, mediaJSON},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept", tc.accept)
		if got := objectMedia(r, tc.hasProtobuf); got != tc.want {
			t.Errorf("objectMedia(%q, protobuf form %v) = %s, want %s", tc.accept, tc.hasProtobuf, got, tc.want)
		}
	}
}

func TestAcceptsJSON(t *testing.T) {
	for accept, want := range map[string]bool{
		"": true,
		"application/vnd.kubernetes.protobuf, */*":                                          true,
		"application/vnd.kubernetes.protobuf,application/json":                              true,
		"application/vnd.kubernetes.protobuf;q=1, application/*":                            true,
		"application/vnd.kubernetes.protobuf":                                               false,
		"application/vnd.kubernetes.protobuf, application/json;q=0":                         false,
		"application/vnd.kubernetes.protobuf, application/json;as=Table;g=meta.k8s.io;v=v1": false,
		"application/yaml": false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept", accept)
		if got := acceptsJSON(r); got != want {
			t.Errorf("acceptsJSON(%q) = %v, want %v", accept, got, want)
		}
	}
}

// A client that prefers protobuf gets built-in objects in protobuf, as
// from upstream, and custom resources in JSON.
func TestProtobufResponses(t *testing.T) {
	ts := newTestServer(t)
	do := func(method, path, body, accept string) (string, []byte) {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		ts.s.ServeHTTP(w, r)
		return w.Header().Get("Content-Type"), w.Body.Bytes()
	}
	const typed = "application/vnd.kubernetes.protobuf,application/json"
	ct, body := do("POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"a"},"data":{"k":"v"}}`, typed)
	if ct != mediaProtobuf {
		t.Fatalf("create answered %s, want protobuf", ct)
	}
	obj, _, err := protobufSerializer().Decode(body, nil, nil)
	if cm, ok := obj.(*corev1.ConfigMap); err != nil || !ok || cm.Name != "a" || cm.Data["k"] != "v" || cm.ResourceVersion == "" || cm.UID == "" {
		t.Fatalf("create answer decodes to %#v, %v", obj, err)
	}
	if ct, _ := do("GET", "/api/v1/namespaces/default/configmaps/a", "", typed); ct != mediaProtobuf {
		t.Errorf("get answered %s, want protobuf", ct)
	}
	if ct, _ := do("GET", "/api/v1/namespaces/default/configmaps/a", "", "application/json"); ct != mediaJSON {
		t.Errorf("get for JSON answered %s", ct)
	}
	ts.must(201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "", strictGadgetCRD)
	do("POST", doohickeysPath, `{"apiVersion":"example.com/v1","kind":"Doohickey","metadata":{"name":"d"}}`, "application/json")
	if ct, _ := do("GET", doohickeysPath+"/d", "", typed); ct != mediaJSON {
		t.Errorf("custom resource answered %s, want JSON", ct)
	}
	if ct, _ := do("GET", doohickeysPath+"/missing", "", typed); ct != mediaProtobuf {
		t.Errorf("custom resource 404 answered %s, want a protobuf Status as upstream", ct)
	}
}
