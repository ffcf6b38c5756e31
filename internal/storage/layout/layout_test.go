package layout

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

func TestKeyRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		res       registry.Resource
		namespace string
		want      string
	}{
		{registry.Resource{GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}, "ns", "/registry/core/pods/ns/a"},
		{registry.Resource{GroupVersionResource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespaced: true}, "ns", "/registry/apps/deployments/ns/a"},
		{registry.Resource{GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}}, "", "/registry/core/namespaces/a"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			key := Key(&tc.res, tc.namespace, "a")
			if key != tc.want {
				t.Fatalf("Key = %q, want %q", key, tc.want)
			}
			group, resource, ok := KeyResource(key)
			if !ok || group != tc.res.Group || resource != tc.res.Resource {
				t.Errorf("KeyResource(%q) = %q, %q, %v, want %q, %q, true", key, group, resource, ok, tc.res.Group, tc.res.Resource)
			}
		})
	}
}

func TestKeyResourceOutsideLayout(t *testing.T) {
	for _, key := range []string{"/other/core/pods/a", "/registry/core", "/registry/core/pods"} {
		if _, _, ok := KeyResource(key); ok {
			t.Errorf("KeyResource(%q) ok = true, want false", key)
		}
	}
}
