package webhooks

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/pkg/apis/clientauthentication"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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

// TestExecCredentialPlugin: a user entry with an exec plugin sends the token
// the plugin prints, and the plugin learns the webhook's address when it
// asks for cluster information.
func TestExecCredentialPlugin(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	info := filepath.Join(dir, "exec-info.json")
	plugin := filepath.Join(dir, "plugin.sh")
	script := "#!/bin/sh\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > " + info + "\n" +
		`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-exec"}}'` + "\n"
	if err := os.WriteFile(plugin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	exec := &clientcmdapi.ExecConfig{Command: plugin, APIVersion: "client.authentication.k8s.io/v1",
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode, ProvideClusterInfo: true}
	cluster := &clientauthentication.Cluster{Server: srv.URL + "/hook"}

	send := func(u *clientcmdapi.AuthInfo) string {
		t.Helper()
		tr := srv.Client().Transport.(*http.Transport).Clone()
		rt, err := applyUser(u, tr, cluster)
		if err != nil {
			t.Fatalf("applyUser: %v", err)
		}
		resp, err := (&http.Client{Transport: rt}).Post(srv.URL+"/hook", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("POST: %v", err)
		}
		resp.Body.Close()
		return got.Load().(string)
	}
	if h := send(&clientcmdapi.AuthInfo{Exec: exec}); h != "Bearer from-exec" {
		t.Errorf("Authorization = %q, want the plugin's token", h)
	}
	if data, err := os.ReadFile(info); err != nil || !strings.Contains(string(data), srv.URL+"/hook") {
		t.Errorf("KUBERNETES_EXEC_INFO = %s, %v; want it to name the webhook %s/hook", data, err, srv.URL)
	}
	// A token in the entry wins over its plugin, as in client-go.
	if h := send(&clientcmdapi.AuthInfo{Token: "static", Exec: exec}); h != "Bearer static" {
		t.Errorf("Authorization with a static token = %q, want Bearer static", h)
	}
}
