package e2e

import (
	"github.com/admitd/admitd/test/e2e/harness"

	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// certsCommand runs `admitd certs` for 127.0.0.1 and localhost into a new
// directory and returns it.
func certsCommand(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "certs")
	out, err := exec.Command(harness.Bin, "certs", "--out", dir, "--hosts", "127.0.0.1,localhost").CombinedOutput()
	if err != nil {
		t.Fatalf("admitd certs: %v\n%s", err, out)
	}
	return dir
}

func loadPair(t *testing.T, dir string) *tls.Certificate {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	return &cert
}

// rotatingWebhook is an HTTPS webhook on 127.0.0.1 whose certificate can be
// replaced while it runs. It denies ConfigMaps that have a key "forbidden".
type rotatingWebhook struct {
	url  string
	cert atomic.Pointer[tls.Certificate]
}

func startRotatingWebhook(t *testing.T, cert *tls.Certificate) *rotatingWebhook {
	t.Helper()
	wh := &rotatingWebhook{}
	wh.cert.Store(cert)
	cfg := &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return wh.cert.Load(), nil }}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		var cm corev1.ConfigMap
		_ = json.Unmarshal(review.Request.Object.Raw, &cm)
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		if _, bad := cm.Data["forbidden"]; bad {
			resp = &admissionv1.AdmissionResponse{UID: review.Request.UID, Result: &metav1.Status{Message: "key forbidden is not allowed"}}
		}
		review.Request, review.Response = nil, resp
		_ = json.NewEncoder(w).Encode(&review)
	})}
	srv.SetKeepAlivesEnabled(false) // every call shakes hands with the current certificate
	srv.ErrorLog = log.New(io.Discard, "", 0)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	wh.url = "https://" + ln.Addr().(*net.TCPAddr).String() + "/validate"
	return wh
}

// injectedConfig is a GitOps-style manifest: no caBundle, only the
// annotation.
func injectedConfig(name, url, from string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: ` + name + `
  annotations:
    admitd.io/inject-ca-from: ` + from + `
webhooks:
- name: ` + name + `
  clientConfig:
    url: ` + url + `
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  sideEffects: None
  admissionReviewVersions: ["v1"]
`
}

// secretFrom is the Secret of `kubectl create secret generic --from-file`
// for the CA certificate of dir.
func secretFrom(t *testing.T, a *admitd, name, dir string) string {
	t.Helper()
	return a.MustKubectl(t, "", "create", "secret", "generic", name, "-n", "default",
		"--from-file=ca.crt="+filepath.Join(dir, "ca.crt"), "--dry-run=client", "-o", "yaml")
}

const deniedMessage = `admission webhook "deny.cainjection.example.com" denied the request: key forbidden is not allowed`

func TestCAInjectionWithCertsCommand(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	first := certsCommand(t)
	wh := startRotatingWebhook(t, loadPair(t, first))

	a.MustKubectl(t, secretFrom(t, a, "hook-ca", first), "apply", "-f", "-")
	manifest := injectedConfig("deny.cainjection.example.com", wh.url, "default/hook-ca")
	// admitd lint's findings (AL001: kube-system in scope) are not
	// CA-injection warnings.
	if _, stderr, err := a.Kubectl(t, manifest, "apply", "-f", "-"); err != nil || strings.Contains(stderr, "Warning: admitd.io") {
		t.Fatalf("kubectl apply of the webhook configuration: err = %v, stderr = %q, want no error and no CA-injection warning", err, stderr)
	}
	caBundle := a.MustKubectl(t, "", "get", "validatingwebhookconfiguration", "deny.cainjection.example.com", "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}")
	if caBundle == "" {
		t.Fatalf("caBundle empty after apply, want it injected from the Secret")
	}

	// The webhook works: its certificate verifies against the injected CA.
	a.MustKubectl(t, "", "create", "configmap", "fine", "--from-literal=a=1")
	_, stderr, err := a.Kubectl(t, "", "create", "configmap", "bad", "--from-literal=forbidden=1")
	if err == nil || !strings.Contains(stderr, deniedMessage) {
		t.Fatalf("create of a forbidden ConfigMap: err = %v, stderr = %q, want %q", err, stderr, deniedMessage)
	}

	// Re-applying the manifest, which has no caBundle, keeps the injected
	// one. (kubectl reports "configured", as against kube-apiserver: the
	// atomic rules list differs from the live one by the defaulted scope.)
	a.MustKubectl(t, manifest, "apply", "-f", "-")
	if again := a.MustKubectl(t, "", "get", "validatingwebhookconfiguration", "deny.cainjection.example.com", "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}"); again != caBundle {
		t.Errorf("caBundle after re-applying the manifest = %q, want %q", again, caBundle)
	}

	// A new CA: the webhook serves a certificate the old caBundle does not
	// trust until the Secret is updated; then the configuration follows.
	second := certsCommand(t)
	wh.cert.Store(loadPair(t, second))
	if _, stderr, _ := a.Kubectl(t, "", "create", "configmap", "bad2", "--from-literal=forbidden=1"); !strings.Contains(stderr, "failed calling webhook") {
		t.Fatalf("create with the old caBundle and the new certificate: stderr = %q, want a failed call", stderr)
	}
	a.MustKubectl(t, secretFrom(t, a, "hook-ca", second), "apply", "-f", "-")
	if _, stderr, err := a.Kubectl(t, "", "create", "configmap", "bad3", "--from-literal=forbidden=1"); err == nil || !strings.Contains(stderr, deniedMessage) {
		t.Fatalf("create after the Secret was updated: err = %v, stderr = %q, want %q", err, stderr, deniedMessage)
	}
}

func TestCAInjectionMissingSecretWarns(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	dir := certsCommand(t)
	wh := startRotatingWebhook(t, loadPair(t, dir))
	manifest := injectedConfig("deny.cainjection.example.com", wh.url, "default/later")

	_, stderr, err := a.Kubectl(t, manifest, "apply", "-f", "-")
	if want := "Warning: admitd.io/inject-ca-from: secret default/later not found"; err != nil || !strings.Contains(stderr, want) {
		t.Fatalf("kubectl apply naming a missing Secret: err = %v, stderr = %q, want a warning %q", err, stderr, want)
	}
	// Without a caBundle the webhook's certificate is not trusted.
	if _, stderr, _ := a.Kubectl(t, "", "create", "configmap", "bad", "--from-literal=forbidden=1"); !strings.Contains(stderr, "failed calling webhook") {
		t.Fatalf("create before the Secret exists: stderr = %q, want a failed call", stderr)
	}
	// The Secret created afterwards fills the caBundle.
	a.MustKubectl(t, secretFrom(t, a, "later", dir), "apply", "-f", "-")
	if _, stderr, err := a.Kubectl(t, "", "create", "configmap", "bad", "--from-literal=forbidden=1"); err == nil || !strings.Contains(stderr, deniedMessage) {
		t.Fatalf("create after the Secret was created: err = %v, stderr = %q, want %q", err, stderr, deniedMessage)
	}
}

func TestCertsCommandHelp(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(harness.Bin, "certs", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Examples:") {
		t.Fatalf("admitd certs --help: err = %v, output %q, want an example", err, out)
	}
	if err := exec.Command(harness.Bin, "certs", "--out", t.TempDir()).Run(); err == nil {
		t.Errorf("admitd certs without --hosts succeeded, want a non-zero exit")
	}
}
