package webhooks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCandidateNames(t *testing.T) {
	cases := []struct {
		target string
		want   []string
	}{
		{"one.two.three.com:8443", []string{"one.two.three.com:8443", "*.two.three.com:8443", "*.three.com:8443", "*.com:8443"}},
		{"svc.ns.svc:443", []string{"svc.ns.svc:443", "*.ns.svc:443", "*.svc:443", "svc.ns.svc", "*.ns.svc", "*.svc"}},
		{"127.0.0.1:9443", []string{"127.0.0.1:9443", "*.0.0.1:9443", "*.0.1:9443", "*.1:9443"}},
	}
	for _, tc := range cases {
		if got := candidateNames(tc.target); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("candidateNames(%q) = %v, want %v", tc.target, got, tc.want)
		}
	}
}

func TestUserFor(t *testing.T) {
	kubeconfig := `apiVersion: v1
kind: Config
users:
- name: exact.example.com:8443
  user: {token: exact}
- name: "*.example.com"
  user: {token: wildcard}
- name: "*"
  user: {token: star}
`
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := loadCredentials(path)
	if err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]string{
		"exact.example.com:8443": "exact",
		"hook.example.com:443":   "wildcard",
		"hook.example.com:8443":  "star",
		"other.org:443":          "star",
	} {
		if got := c.userFor(target); got == nil || got.Token != want {
			t.Errorf("userFor(%q) = %v, want token %q", target, got, want)
		}
	}
}

func TestLoadPluginConfig(t *testing.T) {
	cases := []struct {
		doc, err string
	}{
		{"apiVersion: apiserver.config.k8s.io/v1\nkind: WebhookAdmissionConfiguration\nkubeConfigFile: /etc/kc\n", ""},
		{"apiVersion: apiserver.config.k8s.io/v1\nkind: WebhookAdmissionConfiguration\nkubeConfigFile: rel/kc\n", `kubeConfigFile: Invalid value: "rel/kc": must be an absolute file path`},
		{"apiVersion: apiserver.config.k8s.io/v1\nkind: Unknown\n", `no kind "Unknown" is registered for version "apiserver.config.k8s.io/v1"`},
		{"apiVersion: apiserver.config.k8s.io/v1\nkind: WebhookAdmissionConfiguration\nbogus: 1\n", `unknown field "bogus"`},
	}
	for _, tc := range cases {
		_, err := loadPluginConfig(strings.NewReader(tc.doc))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("loadPluginConfig(%q) = %v, want success", tc.doc, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("loadPluginConfig(%q) = %v, want %q", tc.doc, err, tc.err)
		}
	}
}
