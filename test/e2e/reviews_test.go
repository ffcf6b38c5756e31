package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sarYAML = `apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: bob
  groups: [dev]
  resourceAttributes: {verb: get, resource: pods, namespace: default}
`

const tokenReviewYAML = `apiVersion: authentication.k8s.io/v1
kind: TokenReview
spec:
  token: s3cret
`

// The review resources answer kubectl from the default authorizers (Node,RBAC),
// are never stored, and TokenReview knows the token file and the server's
// service-account tokens.
func TestKubectlReviews(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte("s3cret,carol,1001,\"dev,ops\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAdmitd(t, filepath.Join(dir, "data"), "--token-auth-file", tokenFile)

	if out, _, err := a.Kubectl(t, "", "auth", "can-i", "create", "pods", "--as", "bob", "-n", "default"); err == nil || strings.TrimSpace(out) != "no" {
		t.Errorf("kubectl auth can-i create pods --as bob, unbound = %q, %v; want no", out, err)
	}
	if out := a.MustKubectl(t, sarYAML, "create", "-f", "-", "-o", "jsonpath={.status.allowed}"); out != "false" {
		t.Errorf("SubjectAccessReview for bob, unbound: allowed = %q, want not allowed", out)
	}
	a.MustKubectl(t, "", "create", "rolebinding", "bob-edit", "--clusterrole=edit", "--user=bob", "-n", "default")
	if out := a.MustKubectl(t, "", "auth", "can-i", "create", "pods", "--as", "bob", "-n", "default"); strings.TrimSpace(out) != "yes" {
		t.Errorf("kubectl auth can-i create pods --as bob, bound to edit = %q, want yes", out)
	}
	if out := a.MustKubectl(t, "", "auth", "can-i", "--list", "-n", "default"); !strings.Contains(out, "*.*") {
		t.Errorf("kubectl auth can-i --list as the admin = %q, want cluster-admin's *.* rule", out)
	}
	if out := a.MustKubectl(t, "", "auth", "can-i", "--list", "-n", "default", "--as", "bob"); !strings.Contains(out, "configmaps") || strings.Contains(out, "*.*") {
		t.Errorf("kubectl auth can-i --list as bob = %q, want edit's rules (configmaps, ...), not *.*", out)
	}
	if out := a.MustKubectl(t, "", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); out != "admitd-admin" {
		t.Errorf("kubectl auth whoami = %q, want admitd-admin", out)
	}
	for i := 0; i < 2; i++ {
		out := a.MustKubectl(t, sarYAML, "create", "-f", "-", "-o", "jsonpath={.status.allowed} {.spec.user} {.metadata.name}")
		if out != "true bob " {
			t.Errorf("kubectl create SubjectAccessReview (#%d) = %q, want allowed for bob, without a name", i+1, out)
		}
	}
	lsar := strings.Replace(sarYAML, "kind: SubjectAccessReview", "kind: LocalSubjectAccessReview", 1)
	if out := a.MustKubectl(t, lsar, "create", "-n", "default", "-f", "-", "-o", "jsonpath={.status.allowed}"); out != "true" {
		t.Errorf("kubectl create LocalSubjectAccessReview = %q, want allowed", out)
	}
	if _, errOut, err := a.Kubectl(t, "", "get", "subjectaccessreviews"); err == nil || !strings.Contains(errOut, "MethodNotAllowed") {
		t.Errorf("kubectl get subjectaccessreviews = %v %q, want MethodNotAllowed: reviews are not stored", err, errOut)
	}
	out := a.MustKubectl(t, tokenReviewYAML, "create", "-f", "-", "-o",
		"jsonpath={.status.authenticated} {.status.user.username} {.status.user.uid} {.status.user.groups} {.status.audiences}")
	if want := `true carol 1001 ["dev","ops","system:authenticated"] ["https://kubernetes.default.svc.cluster.local"]`; out != want {
		t.Errorf("kubectl create TokenReview = %q, want %q", out, want)
	}
	a.MustKubectl(t, "", "create", "serviceaccount", "bot", "-n", "default")
	saToken := strings.TrimSpace(a.MustKubectl(t, "", "create", "token", "bot", "-n", "default"))
	saReview := strings.Replace(tokenReviewYAML, "s3cret", saToken, 1)
	if out := a.MustKubectl(t, saReview, "create", "-f", "-", "-o", "jsonpath={.status.authenticated} {.status.user.username}"); out != "true system:serviceaccount:default:bot" {
		t.Errorf("kubectl create TokenReview of a kubectl create token = %q, want the service account", out)
	}
	bad := strings.Replace(tokenReviewYAML, "s3cret", "wrong", 1)
	if out := a.MustKubectl(t, bad, "create", "-f", "-", "-o", "jsonpath={.status.authenticated}|{.status.error}"); out != "|invalid bearer token" {
		t.Errorf("kubectl create TokenReview of an unknown token = %q, want not authenticated, invalid bearer token", out)
	}
}
