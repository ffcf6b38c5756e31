package policies

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzPluginConfig feeds arbitrary bytes to the plugin configuration
// decoder: it must fail cleanly, never panic.
func FuzzPluginConfig(f *testing.F) {
	f.Add([]byte("apiVersion: apiserver.config.k8s.io/v1\nkind: ValidatingAdmissionPolicyConfiguration\n"))
	f.Add([]byte("kind: MutatingAdmissionPolicyConfiguration\nstaticManifestsDir: relative\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = loadPluginConfig(bytes.NewReader(data), "ValidatingAdmissionPolicyConfiguration")
	})
}

// FuzzManifestFile feeds arbitrary files to the static manifest decoder.
func FuzzManifestFile(f *testing.F) {
	f.Add([]byte("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p.static.k8s.io}\nspec: {}\n"))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: admissionregistration.k8s.io/v1, kind: MutatingAdmissionPolicyBinding, metadata: {name: b.static.k8s.io}, spec: {policyName: p.static.k8s.io}}\n"))
	f.Add([]byte("---\n---\nkind: 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f.yaml"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, mutating := range []bool{false, true} {
			_, _ = manifestLoader{mutating: mutating}.load(dir)
		}
	})
}
