package apiserver

import (
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A client that takes only protobuf gets lists and watch events in
// protobuf, as from kube-apiserver 1.37.2 (curl with
// "Accept: application/vnd.kubernetes.protobuf" beside start.sh); one that
// takes JSON too gets them in JSON, and YAML preferred by q gets YAML.
func TestCollectionsInTheMediaTypesAccepted(t *testing.T) {
	ts := newTestServer(t)
	ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"a"},"data":{"k":"v"}}`)
	ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"b"}}`)
	list := func(accept string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", cmPath+"?limit=1", nil)
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		ts.s.ServeHTTP(w, r)
		return w
	}
	w := list(mediaProtobuf)
	if ct := w.Header().Get("Content-Type"); w.Code != 200 || ct != mediaProtobuf {
		t.Fatalf("protobuf-only list answered %d %s: %s", w.Code, ct, w.Body)
	}
	obj, _, err := protobufSerializer().Decode(w.Body.Bytes(), nil, nil)
	cms, ok := obj.(*corev1.ConfigMapList)
	if err != nil || !ok || len(cms.Items) != 1 || cms.Items[0].Name != "a" || cms.Items[0].Data["k"] != "v" || cms.Continue == "" || cms.ResourceVersion == "" {
		t.Fatalf("protobuf list decodes to %#v, %v", obj, err)
	}
	for accept, want := range map[string]string{
		"application/vnd.kubernetes.protobuf, */*":                  mediaJSON,
		"application/vnd.kubernetes.protobuf,application/json":      mediaJSON,
		"application/json;q=0, application/yaml":                    mediaYAML,
		"application/yaml;q=0.5, application/json;q=0.4":            mediaYAML,
		"application/vnd.kubernetes.protobuf, application/json;q=0": mediaProtobuf,
	} {
		if w := list(accept); w.Header().Get("Content-Type") != want {
			t.Errorf("list for %q answered %d %s, want %s", accept, w.Code, w.Header().Get("Content-Type"), want)
		}
	}
	watchProtobufOnly(t, ts)
}

// watchProtobufOnly watches the config maps from the start, taking only
// protobuf, and checks the frames hold both objects.
func watchProtobufOnly(t *testing.T, ts *testServer) {
	t.Helper()
	srv := httptest.NewServer(ts.s)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+cmPath+"?watch=true&resourceVersion=0&timeoutSeconds=1", nil)
	req.Header.Set("Accept", mediaProtobuf)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != mediaProtobuf+";stream=watch" {
		t.Fatalf("protobuf-only watch answered %s", ct)
	}
	var names []string
	for {
		var size [4]byte
		if _, err := io.ReadFull(resp.Body, size[:]); err != nil {
			break
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(resp.Body, frame); err != nil {
			t.Fatalf("short frame: %v", err)
		}
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(frame); err != nil {
			t.Fatalf("frame does not decode: %v", err)
		}
		obj, _, err := protobufSerializer().Decode(ev.Object.Raw, nil, nil)
		cm, ok := obj.(*corev1.ConfigMap)
		if err != nil || !ok || ev.Type != "ADDED" {
			t.Fatalf("event %s holds %#v, %v", ev.Type, obj, err)
		}
		names = append(names, cm.Name)
	}
	if len(names) != 2 || names[0] != "a" || names[1] != "b" {
		t.Errorf("watch events named %v, want [a b]", names)
	}
}
