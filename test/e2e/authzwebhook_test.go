package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// sarRecorder is a remote authorizer that allows alice to list namespaces,
// has no opinion on anything else, and keeps the reviews it was sent.
type sarRecorder struct {
	mu      sync.Mutex
	reviews []authorizationv1.SubjectAccessReview
	badAuth int
}

func (s *sarRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var sar authorizationv1.SubjectAccessReview
	if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.reviews = append(s.reviews, sar)
	if r.Header.Get("Authorization") != "Bearer apiserver-to-authz" {
		s.badAuth++
	}
	s.mu.Unlock()
	ra := sar.Spec.ResourceAttributes
	if sar.Spec.User == "alice" && ra != nil && ra.Resource == "namespaces" && ra.Verb == "list" {
		sar.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "alice may list namespaces"}
	} else {
		sar.Status = authorizationv1.SubjectAccessReviewStatus{Reason: "not my business"}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(sar)
}

func (s *sarRecorder) find(user, resource, verb string) (authorizationv1.SubjectAccessReview, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reviews {
		ra := r.Spec.ResourceAttributes
		if r.Spec.User == user && ra != nil && ra.Resource == resource && ra.Verb == verb {
			return r, true
		}
	}
	return authorizationv1.SubjectAccessReview{}, false
}

// With Node,RBAC,Webhook, a remote authorizer grants alice what RBAC does
// not (listing namespaces); what neither grants stays forbidden.
func TestAuthorizationWebhookGrantsWhatRBACDoesNot(t *testing.T) {
	t.Parallel()
	rec, webhookConfig := startSARRecorder(t)
	a, alice := startWithAlice(t, "--authorization-mode=Node,RBAC,Webhook",
		"--authorization-webhook-config-file="+webhookConfig, "--authorization-webhook-version=v1")
	checkWebhookGrants(t, a, alice, rec)
}

// The same chain from --authorization-config.
func TestAuthorizationConfigWebhookGrantsWhatRBACDoesNot(t *testing.T) {
	t.Parallel()
	rec, webhookConfig := startSARRecorder(t)
	config := filepath.Join(t.TempDir(), "authz.yaml")
	data := `apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- {type: Node, name: node}
- {type: RBAC, name: rbac}
- type: Webhook
  name: remote
  webhook:
    timeout: 5s
    subjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ` + webhookConfig + `}
`
	if err := os.WriteFile(config, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	a, alice := startWithAlice(t, "--authorization-config="+config)
	checkWebhookGrants(t, a, alice, rec)
}

func TestAuthorizationConfigRefusedWithModes(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "authz.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: RBAC, name: rbac}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := tryStartAdmitd(t.TempDir(), "--authorization-config="+config, "--authorization-mode=RBAC")
	if err == nil {
		a.Stop()
		t.Fatal("--authorization-config with --authorization-mode started")
	}
	if want := "--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined"; !strings.Contains(err.Error(), want) {
		t.Errorf("start: %v, want %q", err, want)
	}
}

// startSARRecorder starts a sarRecorder and writes the kubeconfig that
// calls it with a token.
func startSARRecorder(t *testing.T) (*sarRecorder, string) {
	t.Helper()
	rec := &sarRecorder{}
	srv := webhooktest.Start(t, rec)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["authz"] = &clientcmdapi.Cluster{Server: srv.URL + "/authorize", CertificateAuthorityData: srv.CABundle()}
	cfg.AuthInfos["admitd"] = &clientcmdapi.AuthInfo{Token: "apiserver-to-authz"}
	cfg.Contexts["authz"] = &clientcmdapi.Context{Cluster: "authz", AuthInfo: "admitd"}
	cfg.CurrentContext = "authz"
	webhookConfig := filepath.Join(t.TempDir(), "authz-webhook.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, webhookConfig); err != nil {
		t.Fatal(err)
	}
	return rec, webhookConfig
}

// checkWebhookGrants: alice may list namespaces (the webhook's grant) and
// still may not write in "other"; the webhook saw both questions.
func checkWebhookGrants(t *testing.T, a *admitd, alice string, rec *sarRecorder) {
	t.Helper()
	as := func(args ...string) (string, string, error) {
		return a.Kubectl(t, "", append([]string{"--kubeconfig", alice}, args...)...)
	}
	if out, errOut, err := as("get", "namespaces"); err != nil || !strings.Contains(out, "mine") {
		t.Errorf("alice listing namespaces = %v, %q %q; want the list (the webhook allows it)", err, out, errOut)
	}
	want := `User "alice" cannot create resource "configmaps" in API group "" in the namespace "other"`
	if _, errOut, err := as("create", "configmap", "c1", "-n", "other"); err == nil || !strings.Contains(errOut, want) {
		t.Errorf("alice creating a configmap in other = %v, %q; want an error with %q", err, errOut, want)
	}
	sar, ok := rec.find("alice", "namespaces", "list")
	if !ok {
		t.Fatal("the webhook was not asked whether alice may list namespaces")
	}
	if sar.APIVersion != "authorization.k8s.io/v1" || sar.Spec.UID != "1001" || !strings.Contains(strings.Join(sar.Spec.Groups, ","), "devs") {
		t.Errorf("review sent = %s %+v, want v1 with alice's uid 1001 and group devs", sar.APIVersion, sar.Spec)
	}
	if _, ok := rec.find("alice", "configmaps", "create"); !ok {
		t.Error("the webhook was not asked about what RBAC did not allow")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.badAuth != 0 {
		t.Errorf("%d reviews came without the kubeconfig's token", rec.badAuth)
	}
}
