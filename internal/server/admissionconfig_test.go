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

// A file that is not an AdmissionConfiguration but has
// podNodeSelectorPluginConfig (or imagePolicy) at its top level is given
// whole to PodNodeSelector and ImagePolicyWebhook, as upstream's legacy
// fallback; any other such file is refused.
func TestLegacyAdmissionConfig(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		yaml   string
		legacy bool
		err    string
	}{
		"node selector":       {yaml: "podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n", legacy: true},
		"image policy":        {yaml: "imagePolicy:\n  kubeConfigFile: x\n", legacy: true},
		"other kind":          {yaml: "apiVersion: v1\nkind: Foo\npodNodeSelectorPluginConfig: {}\n", legacy: true},
		"neither":             {yaml: "foo: 1\n", err: "unable to read admission control configuration"},
		"admission config":    {yaml: "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\npodNodeSelectorPluginConfig: {}\n", err: `unknown field "podNodeSelectorPluginConfig"`},
		"repeated key legacy": {yaml: "podNodeSelectorPluginConfig: {}\npodNodeSelectorPluginConfig: {}\n", legacy: true},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := loadAdmissionConfig(path)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: loadAdmissionConfig = %v, want %q", name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: loadAdmissionConfig = %v, want the legacy file", name, err)
			continue
		}
		for _, plugin := range []string{"PodNodeSelector", "ImagePolicyWebhook"} {
			if got := string(cfg[plugin]); got != tc.yaml {
				t.Errorf("%s: configuration of %s = %q, want the whole file %q", name, plugin, got, tc.yaml)
			}
		}
		if cfg.configFor("PodTolerationRestriction") != nil {
			t.Errorf("%s: PodTolerationRestriction has a configuration, want none", name)
		}
	}
}
