package apiserver

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Legacy discovery's storageVersionHash and a custom resource's verbs, as
// kube-apiserver 1.37.2 listed them (curl beside start.sh; all 124
// resources it serves compared): resources without storage have none,
// custom resource definitions hash their v1beta1 storage version.
func TestDiscoveryStorageVersionHash(t *testing.T) {
	ts := newWidgetServer(t)
	hashes := func(path string) map[string]metav1.APIResource {
		var list metav1.APIResourceList
		if err := json.Unmarshal(ts.do("GET", path, "", "").Body.Bytes(), &list); err != nil {
			t.Fatal(err)
		}
		out := map[string]metav1.APIResource{}
		for _, r := range list.APIResources {
			out[r.Name] = r
		}
		return out
	}
	core, crds, widgets := hashes("/api/v1"), hashes("/apis/apiextensions.k8s.io/v1"), hashes("/apis/example.com/v1")
	for _, tc := range []struct {
		got  metav1.APIResource
		want string
	}{
		{core["configmaps"], "qFsyl6wFWjQ="},
		{core["pods"], "xPOwRZ+Yhw8="},
		{core["bindings"], ""},
		{core["componentstatuses"], ""},
		{core["pods/status"], ""},
		{crds["customresourcedefinitions"], "jfWCUB31mvA="},
		{widgets["widgets"], "gIwvi5rymmg="},
	} {
		if tc.got.StorageVersionHash != tc.want {
			t.Errorf("%q: storageVersionHash %q, want %q", tc.got.Name, tc.got.StorageVersionHash, tc.want)
		}
	}
	if got := widgets["widgets"].Verbs; len(got) != 8 || got[0] != "delete" || got[5] != "create" {
		t.Errorf("custom resource verbs %v, want the apiextensions server's order", got)
	}
}

// /api/v1's resource list names no apiVersion; the groups' lists do, as
// kube-apiserver 1.37.2's.
func TestLegacyResourceListTypeMeta(t *testing.T) {
	ts := newTestServer(t)
	for path, want := range map[string]string{"/api/v1": "", "/apis/apps/v1": "v1"} {
		var tm metav1.TypeMeta
		if err := json.Unmarshal(ts.do("GET", path, "", "").Body.Bytes(), &tm); err != nil || tm.Kind != "APIResourceList" || tm.APIVersion != want {
			t.Errorf("%s: %+v, %v; want apiVersion %q", path, tm, err, want)
		}
	}
}
