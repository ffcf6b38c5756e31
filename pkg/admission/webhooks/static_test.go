package webhooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const staticValidating = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: %NAME%}
webhooks:
- name: v.example.com
  clientConfig: {%CC%}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  sideEffects: None
  admissionReviewVersions: [v1]
`

func manifestDoc(name, cc string) string {
	return strings.NewReplacer("%NAME%", name, "%CC%", cc).Replace(staticValidating)
}

func TestLoadManifests(t *testing.T) {
	url := `url: "https://127.0.0.1:9443/v"`
	cases := []struct {
		name  string
		files map[string]string
		err   string
		want  []string
	}{
		{"sorted by name across files", map[string]string{
			"b.yaml": manifestDoc("b.static.k8s.io", url),
			"a.yml":  manifestDoc("z.static.k8s.io", url) + "---\n" + manifestDoc("a.static.k8s.io", url),
			"c.txt":  "ignored",
		}, "", []string{"a.static.k8s.io", "b.static.k8s.io", "z.static.k8s.io"}},
		{"name without suffix", map[string]string{"a.yaml": manifestDoc("plain", url)}, `error loading a.yaml: "plain" in file "a.yaml" must have a name ending with ".static.k8s.io"`, nil},
		{"duplicate name", map[string]string{"a.yaml": manifestDoc("x.static.k8s.io", url), "b.yaml": manifestDoc("x.static.k8s.io", url)},
			`error loading b.yaml: duplicate name "x.static.k8s.io" found in file "b.yaml" (previously seen in "a.yaml")`, nil},
		{"service reference", map[string]string{"a.yaml": manifestDoc("s.static.k8s.io", `service: {name: s, namespace: ns1}`)},
			`clientConfig.service is not supported for static manifests; use clientConfig.url instead`, nil},
		{"wrong kind", map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"}, "error loading a.yaml: unsupported resource type v1, Kind=ConfigMap", nil},
		{"unknown field", map[string]string{"a.yaml": strings.Replace(manifestDoc("u.static.k8s.io", url), "sideEffects", "bogus: 1\n  sideEffects", 1)}, `unknown field`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for f, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			set, err := loadManifests(dir, false, manifestChecks{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("loadManifests = %v, want error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range set.validating {
				got = append(got, c.Name)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") || !strings.HasPrefix(set.hash, "sha256:") {
				t.Fatalf("loaded %v (hash %q), want %v", got, set.hash, tc.want)
			}
		})
	}
}

func TestCombinedSnapshotOrdersStaticFirst(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(manifestDoc("s.static.k8s.io", `url: "https://127.0.0.1:1/v"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := loadManifests(dir, false, manifestChecks{})
	if err != nil {
		t.Fatal(err)
	}
	api := NewSnapshot(nil, set.validating) // reuse the same shape as an API configuration
	snap := combineSnapshots(nil, nil, set.validating, api.validatingConfigs)
	if len(snap.validatingHooks) != 2 {
		t.Fatalf("combined %d hooks, want 2", len(snap.validatingHooks))
	}
	first, second := snap.validatingHooks[0], snap.validatingHooks[1]
	if !first.Static || first.UID != "manifest/s.static.k8s.io/v.example.com/0" || first.Index != 0 {
		t.Errorf("first hook = static %v uid %q index %d, want the static one at index 0", first.Static, first.UID, first.Index)
	}
	if second.Static || second.UID != "s.static.k8s.io/v.example.com/0" || second.Index != 1 {
		t.Errorf("second hook = static %v uid %q index %d, want the API one at index 1", second.Static, second.UID, second.Index)
	}
}
