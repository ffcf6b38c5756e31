package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// startWithAlice starts admitd (default authorization: Node,RBAC) with a token
// user alice bound to the edit ClusterRole in namespace "mine"; "other"
// exists too. It returns the server and a kubeconfig for alice.
func startWithAlice(t *testing.T, args ...string) (*admitd, string) {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("alice-token,alice,1001,\"devs\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAdmitd(t, filepath.Join(dir, "data"), append([]string{"--token-auth-file", tokens}, args...)...)
	a.MustKubectl(t, "", "create", "namespace", "mine")
	a.MustKubectl(t, "", "create", "namespace", "other")
	a.MustKubectl(t, "", "create", "rolebinding", "alice-edit", "--clusterrole=edit", "--user=alice", "-n", "mine")
	return a, aliceKubeconfig(t, a, dir)
}

// aliceKubeconfig is the admin kubeconfig with alice's token instead of the
// admin's client certificate.
func aliceKubeconfig(t *testing.T, a *admitd, dir string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(a.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AuthInfos = map[string]*clientcmdapi.AuthInfo{"alice": {Token: "alice-token"}}
	for _, c := range cfg.Contexts {
		c.AuthInfo = "alice"
	}
	path := filepath.Join(dir, "alice.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// A user bound to edit in one namespace may write there and nowhere else;
// the refusal is kube-apiserver's 403.
func TestRBACEditInOneNamespace(t *testing.T) {
	t.Parallel()
	a, alice := startWithAlice(t)
	as := func(args ...string) (string, string, error) {
		return a.Kubectl(t, "", append([]string{"--kubeconfig", alice}, args...)...)
	}
	if out, errOut, err := as("create", "configmap", "c1", "-n", "mine"); err != nil {
		t.Fatalf("alice creating a configmap in mine: %v\n%s%s", err, out, errOut)
	}
	if out, errOut, err := as("delete", "configmap", "c1", "-n", "mine"); err != nil {
		t.Fatalf("alice deleting a configmap in mine: %v\n%s%s", err, out, errOut)
	}
	want := `configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "other"`
	if _, errOut, err := as("create", "configmap", "c1", "-n", "other"); err == nil || !strings.Contains(errOut, want) {
		t.Errorf("alice creating a configmap in other = %v, %q; want an error with %q", err, errOut, want)
	}
	want = `namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope`
	if _, errOut, err := as("get", "namespaces"); err == nil || !strings.Contains(errOut, want) {
		t.Errorf("alice listing namespaces = %v, %q; want an error with %q", err, errOut, want)
	}
	// edit grants no RBAC writes, so alice cannot grant herself more.
	want = `rolebindings.rbac.authorization.k8s.io is forbidden: User "alice" cannot create resource "rolebindings"`
	if _, errOut, err := as("create", "rolebinding", "more", "--clusterrole=admin", "--user=alice", "-n", "mine"); err == nil || !strings.Contains(errOut, want) {
		t.Errorf("alice binding admin = %v, %q; want an error with %q", err, errOut, want)
	}
}

// Impersonation without the impersonate verb is refused with upstream's
// 403 (constrained impersonation's user-info mode is asked first, so its
// impersonate-on check is the one reported); edit's impersonate on the
// namespace's service accounts lets alice act as one of them.
func TestRBACImpersonation(t *testing.T) {
	t.Parallel()
	a, alice := startWithAlice(t)
	c := httpClient(t, a)
	for _, tc := range []struct {
		headers map[string]string
		want    string
	}{
		{map[string]string{"Impersonate-User": "bob"},
			`User \"alice\" cannot impersonate-on:user-info:list resource \"configmaps\" in API group \"\" in the namespace \"mine\"`},
		{map[string]string{"Impersonate-User": "frank", "Impersonate-Group": "system:masters"},
			`User \"alice\" cannot impersonate-on:user-info:list resource \"configmaps\"`},
	} {
		req, _ := http.NewRequest(http.MethodGet, a.URL+"/api/v1/namespaces/mine/configmaps", nil)
		req.Header.Set("Authorization", "Bearer alice-token")
		for k, v := range tc.headers {
			req.Header.Set(k, v)
		}
		code, body := do(t, c, req)
		if code != http.StatusForbidden || !strings.Contains(body, tc.want) {
			t.Errorf("alice impersonating %v = %d %s, want 403 with %s", tc.headers, code, body, tc.want)
		}
	}
	want := `configmaps is forbidden: User "system:serviceaccount:mine:default" cannot list resource "configmaps" in API group "" in the namespace "mine"`
	_, errOut, err := a.Kubectl(t, "", "--kubeconfig", alice, "get", "configmaps", "-n", "mine", "--as=system:serviceaccount:mine:default")
	if err == nil || !strings.Contains(errOut, want) {
		t.Errorf("alice as the default service account = %v, %q; want an error with %q", err, errOut, want)
	}
}

// httpClient trusts the server's CA and sends no client certificate.
func httpClient(t *testing.T, a *admitd) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(a.RestConfig(t).CAData)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

func do(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// kubectl auth can-i (SelfSubjectAccessReview and, with --list,
// SelfSubjectRulesReview, answered from the authorizer) agrees with what the
// server does.
func TestRBACCanI(t *testing.T) {
	t.Parallel()
	a, alice := startWithAlice(t)
	canI := func(args ...string) string {
		out, _, _ := a.Kubectl(t, "", append([]string{"--kubeconfig", alice, "auth", "can-i"}, args...)...)
		return strings.TrimSpace(out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "configmaps", "-n", "mine"}, "yes"},
		{[]string{"delete", "deployments.apps", "-n", "mine"}, "yes"},
		{[]string{"get", "secrets", "-n", "mine"}, "yes"},
		{[]string{"create", "rolebindings", "-n", "mine"}, "no"},
		{[]string{"create", "configmaps", "-n", "other"}, "no"},
		{[]string{"list", "namespaces"}, "no"},
		{[]string{"impersonate", "serviceaccounts/default", "-n", "mine"}, "yes"},
		{[]string{"impersonate", "users/bob"}, "no"},
		{[]string{"delete", "nodes"}, "no"},
	} {
		if got := canI(tc.args...); got != tc.want {
			t.Errorf("kubectl auth can-i %s = %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
	list := canI("--list", "-n", "mine")
	for _, want := range []string{"configmaps", "deployments.apps", "selfsubjectaccessreviews.authorization.k8s.io"} {
		if !strings.Contains(list, want) {
			t.Errorf("kubectl auth can-i --list -n mine = %q, want a rule for %s", list, want)
		}
	}
	if strings.Contains(list, "*.*") || strings.Contains(list, "rolebindings") {
		t.Errorf("kubectl auth can-i --list -n mine = %q, want edit's rules only (no *.*, no rolebindings)", list)
	}
}

// An unknown or unimplemented --authorization-mode refuses to start, with
// kube-apiserver's message for the unknown one.
func TestAuthorizationModeRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, want string }{
		{"TotallyBogus", `authorization-mode "TotallyBogus" is not a valid mode`},
		{"RBAC,RBAC", `authorization-mode ["RBAC" "RBAC"] has mode specified more than once`},
		{"Node,Webhook", "authorization-mode Webhook's authorization config file not passed"},
		{"Node,ABAC", "authorization-mode ABAC is not implemented by admitd yet"},
	} {
		a, err := tryStartAdmitd(t.TempDir(), "--authorization-mode="+tc.mode)
		if err == nil {
			a.Stop()
			t.Errorf("--authorization-mode=%s started", tc.mode)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--authorization-mode=%s: %v, want %q", tc.mode, err, tc.want)
		}
	}
}

// With --anonymous-auth, a request without credentials is system:anonymous
// and gets what RBAC grants system:unauthenticated: public information only.
func TestAnonymousGetsOnlyPublicInfo(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--anonymous-auth")
	c := httpClient(t, a)
	get := func(path string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, a.URL+path, nil)
		return do(t, c, req)
	}
	if code, body := get("/version"); code != http.StatusOK {
		t.Errorf("anonymous GET /version = %d %s, want 200", code, body)
	}
	code, body := get("/api/v1/namespaces")
	want := `User \"system:anonymous\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope`
	if code != http.StatusForbidden || !strings.Contains(body, want) {
		t.Errorf("anonymous GET /api/v1/namespaces = %d %s, want 403 with %s", code, body, want)
	}
	if code, body := get("/apis"); code != http.StatusForbidden {
		t.Errorf("anonymous GET /apis = %d %s, want 403 (system:discovery is for authenticated users)", code, body)
	}
}
