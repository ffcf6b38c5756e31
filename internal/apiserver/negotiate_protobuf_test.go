package apiserver

import (
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestWantsProtobuf(t *testing.T) {
	for accept, want := range map[string]bool{
		"application/vnd.kubernetes.protobuf,application/json":                                             true,
		"application/vnd.kubernetes.protobuf, */*":                                                         true,
		"application/json, application/vnd.kubernetes.protobuf":                                            false,
		"application/json;q=0.5, application/vnd.kubernetes.protobuf":                                      true,
		"application/vnd.kubernetes.protobuf;q=0.5, application/json":                                      false,
		"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json":                 false,
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json": false,
		"application/vnd.kubernetes.protobuf;q=0":                                                          false,
		" application/vnd.kubernetes.protobuf , application/json;q=0.9":                                    true,
		"application/vnd.kubernetes.protobuf, application/json;q=2":                                        false,
		"text/plain;x, application/vnd.kubernetes.protobuf":                                                true,
		"": false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept", accept)
		if got := wantsProtobuf(r); got != want {
			t.Errorf("wantsProtobuf(%q) = %v, want %v", accept, got, want)
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
