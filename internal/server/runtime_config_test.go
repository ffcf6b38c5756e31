package server

import (
	"strings"
	"testing"

	"github.com/admitd/admitd/internal/registry"
)

func TestNeedCoreResources(t *testing.T) {
	for value, wantErr := range map[string]string{
		"":                        "",
		"api/all=false,v1=true":   "",
		"api/v1=false":            "namespaces of the core group v1",
		"v1/pods=false":           "namespaces of the core group v1",
		"api/all=false,apps/v1=1": "namespaces of the core group v1",
	} {
		pairs := map[string]string{}
		registry.ParseRuntimeConfigMap(pairs, value)
		apis, err := registry.NewAPIEnablement(pairs, registry.RuntimeConfigOptions{})
		if err != nil {
			t.Fatalf("NewAPIEnablement(%q): %v", value, err)
		}
		err = needCoreResources(apis)
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("needCoreResources(%q) = %v, want %q", value, err, wantErr)
		}
	}
}
