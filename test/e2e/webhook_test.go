package e2e

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/pki"
)

// webhookServer is a real HTTPS webhook on 127.0.0.1 with its own CA.
type webhookServer struct {
	url      string
	caBundle string
}

func startWebhookServer(t *testing.T, handler func(path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) *webhookServer {
	t.Helper()
	ca, err := pki.NewCA("e2e-webhook-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueServing([]string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		resp := handler(r.URL.Path, review.Request)
		resp.UID = review.Request.UID
		review.Request, review.Response = nil, resp
		_ = json.NewEncoder(w).Encode(&review)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &webhookServer{url: "https://" + ln.Addr().(*net.TCPAddr).String(), caBundle: base64.StdEncoding.EncodeToString(ca.CertPEM)}
}

func TestKubectlPodThroughWebhooks(t *testing.T) {
	t.Parallel()
	hooks := startWebhookServer(t, func(path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		var pod corev1.Pod
		_ = json.Unmarshal(req.Object.Raw, &pod)
		if req.Kind.Kind != "Pod" {
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
		if path == "/validate" {
			if pod.Labels["forbidden"] == "true" {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "pods labelled forbidden=true are not allowed"}}
			}
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
		if len(pod.Spec.Containers) == 1 {
			patch := `[{"op":"add","path":"/metadata/labels/injected","value":"yes"},` +
				`{"op":"add","path":"/spec/containers/-","value":{"name":"sidecar","image":"busybox:1.36"}}]`
			pt := admissionv1.PatchTypeJSONPatch
			return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: &pt}
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(dir, "audit.log")
	a := startAdmitd(t, filepath.Join(dir, "data"), "--audit-log-path", auditLog, "--audit-policy-file", policy)
	a.MustKubectl(t, "", "create", "namespace", "team-a")
	a.MustKubectl(t, webhookConfigs(hooks), "apply", "-f", "-")

	a.MustKubectl(t, podManifest, "create", "-f", "-")
	got := a.MustKubectl(t, "", "get", "pod", "web", "-n", "team-a", "-o", "jsonpath={.metadata.labels.injected} {.spec.containers[*].name}")
	if got != "yes nginx sidecar" {
		t.Fatalf("stored pod = %q, want the label and the sidecar the mutating webhook added", got)
	}
	bad := strings.Replace(strings.Replace(podManifest, "app: web", "forbidden: \"true\"", 1), "name: web", "name: web2", 1)
	_, errOut, err := a.Kubectl(t, bad, "create", "-f", "-")
	want := `admission webhook "deny.e2e.admitd.io" denied the request: pods labelled forbidden=true are not allowed`
	if err == nil || !strings.Contains(errOut, want) {
		t.Fatalf("create forbidden pod: err=%v stderr=%q, want %q", err, errOut, want)
	}
	waitForAuditAnnotation(t, auditLog, "mutation.webhook.admission.k8s.io/round_0_index_0")
	metrics := a.Metrics(t)
	for _, m := range []string{
		`apiserver_admission_webhook_admission_duration_seconds_bucket{name="mutate.e2e.admitd.io",operation="CREATE",rejected="false",type="admit"`,
		`apiserver_admission_webhook_rejection_count{error_type="no_error",name="deny.e2e.admitd.io",operation="CREATE",rejection_code="400",type="validating"} 1`,
	} {
		if !strings.Contains(metrics, m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
}

func webhookConfigs(h *webhookServer) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: e2e-mutate}
webhooks:
- name: mutate.e2e.admitd.io
  clientConfig: {url: "` + h.url + `/mutate", caBundle: "` + h.caBundle + `"}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: e2e-deny}
webhooks:
- name: deny.e2e.admitd.io
  clientConfig: {url: "` + h.url + `/validate", caBundle: "` + h.caBundle + `"}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  sideEffects: None
  admissionReviewVersions: [v1]
`
}

func waitForAuditAnnotation(t *testing.T, path, key string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), key) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("audit log %s has no annotation %s", path, key)
}
