package admissionsource

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

func TestRESTMappings(t *testing.T) {
	s := NewSchema(registry.NewCatalogue())
	cases := []struct {
		gk      schema.GroupKind
		version string
		want    []schema.GroupVersionResource
		scope   meta.RESTScopeName
		wantErr string
	}{
		{schema.GroupKind{Kind: "ConfigMap"}, "v1", []schema.GroupVersionResource{{Version: "v1", Resource: "configmaps"}}, meta.RESTScopeNameNamespace, ""},
		{schema.GroupKind{Kind: "ConfigMap"}, "", []schema.GroupVersionResource{{Version: "v1", Resource: "configmaps"}}, meta.RESTScopeNameNamespace, ""},
		{schema.GroupKind{Kind: "Node"}, "v1", []schema.GroupVersionResource{{Version: "v1", Resource: "nodes"}}, meta.RESTScopeNameRoot, ""},
		{schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, "v1", []schema.GroupVersionResource{{Group: "apps", Version: "v1", Resource: "replicasets"}}, meta.RESTScopeNameNamespace, ""},
		{schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, "v2", nil, "", `no matches for kind "ReplicaSet" in version "apps/v2"`},
		{schema.GroupKind{Group: "example.com", Kind: "Widget"}, "v1", nil, "", `no matches for kind "Widget" in version "example.com/v1"`},
	}
	for _, tc := range cases {
		got, err := s.RESTMappings(tc.gk, tc.version)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("RESTMappings(%v, %q) error = %v, want %q", tc.gk, tc.version, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("RESTMappings(%v, %q) = %v", tc.gk, tc.version, err)
			continue
		}
		var gvrs []schema.GroupVersionResource
		for _, m := range got {
			gvrs = append(gvrs, m.Resource)
			if m.Scope.Name() != tc.scope {
				t.Errorf("RESTMappings(%v, %q) scope = %s, want %s", tc.gk, tc.version, m.Scope.Name(), tc.scope)
			}
		}
		if len(gvrs) != len(tc.want) || (len(gvrs) > 0 && gvrs[0] != tc.want[0]) {
			t.Errorf("RESTMappings(%v, %q) = %v, want %v", tc.gk, tc.version, gvrs, tc.want)
		}
	}
}
