package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The admission configuration file is read strictly, as upstream's codec
// reads it: a repeated key or an unknown field is an error.
func TestAdmissionConfigIsReadStrictly(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ yaml, err string }{
		"valid": {"apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n", ""},
		"repeated key": {"apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\nplugins: []\n",
			`strict decoding error: yaml: unmarshal errors:` + "\n" + `  line 4: key "plugins" already set in map`},
		"unknown field": {"apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugin: []\n", `unknown field "plugin"`},
	} {
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := loadAdmissionConfig(path)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: loadAdmissionConfig = %v, want %q", name, err, tc.err)
		}
	}
}
