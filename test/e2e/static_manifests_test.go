package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStaticManifestWebhook configures a validating webhook from a static
// manifest directory (through --admission-control-config-file) and checks
// that it sees ordinary objects and admission configuration objects alike.
func TestStaticManifestWebhook(t *testing.T) {
	t.Parallel()
	hooks := startWebhookServer(t, func(_ string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		if strings.Contains(string(req.Object.Raw), `"blocked":"yes"`) {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "blocked by a static webhook"}}
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	dir := t.TempDir()
	manifests := filepath.Join(dir, "validating")
	if err := os.MkdirAll(manifests, 0o700); err != nil {
		t.Fatal(err)
	}
	manifest := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: guard.static.k8s.io}
webhooks:
- name: guard.e2e.admitd.io
  clientConfig: {url: "` + hooks.url + `/guard", caBundle: "` + hooks.caBundle + `"}
  rules:
  - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}
  - {operations: [CREATE], apiGroups: [admissionregistration.k8s.io], apiVersions: [v1], resources: [validatingwebhookconfigurations]}
  sideEffects: None
  admissionReviewVersions: [v1]
`
	write := func(path, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(manifests, "guard.yaml"), manifest)
	config := filepath.Join(dir, "admission.yaml")
	write(config, `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    staticManifestsDir: `+manifests+`
`)
	a := startAdmitd(t, filepath.Join(dir, "data"), "--admission-control-config-file", config)
	a.MustKubectl(t, "", "create", "configmap", "fine", "--from-literal=blocked=no")
	_, errOut, err := a.Kubectl(t, "", "create", "configmap", "nope", "--from-literal=blocked=yes")
	want := `admission webhook "guard.e2e.admitd.io" denied the request: blocked by a static webhook`
	if err == nil || !strings.Contains(errOut, want) {
		t.Fatalf("blocked configmap: err=%v stderr=%q, want %q", err, errOut, want)
	}
	vwc := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: api-made\n  labels: {blocked: \"yes\"}\nwebhooks: []\n"
	_, errOut, err = a.Kubectl(t, vwc, "create", "-f", "-")
	if err == nil || !strings.Contains(errOut, want) {
		t.Fatalf("webhook configuration create: err=%v stderr=%q, want the static webhook to deny it", err, errOut)
	}

	// Removing the manifest takes effect without waiting for the periodic
	// recheck: the directory is watched.
	if err := os.Remove(filepath.Join(manifests, "guard.yaml")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second) // the recheck runs every 2 s
	for i := 0; ; i++ {
		_, _, err := a.Kubectl(t, "", "create", "configmap", fmt.Sprintf("after-removal-%d", i), "--from-literal=blocked=yes")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the removed static webhook still denies after 1s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
