package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/admitd/admitd/pkg/webhook/webhooktest"
)

// evilImage is the image the test's image policy backend denies.
const evilImage = "registry.example.com/evil:1"

// imagePolicyBackend is a real HTTPS image policy backend on 127.0.0.1 that
// requires a client certificate from its CA: it denies evilImage, allows
// anything else, returns an audit annotation, and counts the reviews it
// answers.
type imagePolicyBackend struct {
	*webhooktest.Server
	reviews atomic.Int64
}

func startImagePolicyBackend(t *testing.T) *imagePolicyBackend {
	t.Helper()
	b := &imagePolicyBackend{}
	s, err := webhooktest.NewUnstartedServer(nil, http.HandlerFunc(b.serve))
	if err != nil {
		t.Fatal(err)
	}
	s.TLS.ClientCAs, s.TLS.ClientAuth = s.CA.Pool(), tls.RequireAndVerifyClientCert
	s.StartTLS()
	t.Cleanup(s.Close)
	b.Server = s
	return b
}

func (b *imagePolicyBackend) serve(w http.ResponseWriter, r *http.Request) {
	var rev imagepolicyv1alpha1.ImageReview
	if err := json.NewDecoder(r.Body).Decode(&rev); err != nil || rev.Kind != "ImageReview" {
		http.Error(w, "not an ImageReview", http.StatusBadRequest)
		return
	}
	b.reviews.Add(1)
	rev.Status = imagepolicyv1alpha1.ImageReviewStatus{Allowed: true, AuditAnnotations: map[string]string{"checked-by": "e2e-backend"}}
	for _, c := range rev.Spec.Containers {
		if c.Image == evilImage {
			rev.Status.Allowed, rev.Status.Reason = false, "image "+evilImage+" is not signed"
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&rev)
}

// kubeconfig writes the kubeconfig admitd reaches the backend with: its
// CA and a client certificate.
func (b *imagePolicyBackend) kubeconfig(t *testing.T, dir string) string {
	t.Helper()
	cert, key, err := b.CA.IssueClientPEM("admitd")
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["image-policy"] = &clientcmdapi.Cluster{Server: b.URL + "/review", CertificateAuthorityData: b.CA.CertPEM}
	cfg.AuthInfos["admitd"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["image-policy"] = &clientcmdapi.Context{Cluster: "image-policy", AuthInfo: "admitd"}
	cfg.CurrentContext = "image-policy"
	path := filepath.Join(dir, "image-policy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeE2EFile(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGuardedResourcePlugins runs the built binary with ImagePolicyWebhook
// enabled (its configuration by path from an AdmissionConfiguration) and
// drives it with kubectl: an image the backend denies is refused with
// kube-apiserver's message and the cached answer serves a second identical
// request; a PVC gets the default StorageClass; a CSR approval for a signer
// the user may not approve is refused by CertificateApproval, and allowed
// for a user who may.
func TestGuardedResourcePlugins(t *testing.T) {
	t.Parallel()
	backend := startImagePolicyBackend(t)
	dir := t.TempDir()
	writeE2EFile(t, filepath.Join(dir, "image-policy.yaml"), fmt.Sprintf(
		"imagePolicy:\n  kubeConfigFile: %s\n  allowTTL: 300\n  denyTTL: 300\n  retryBackoff: 100\n  defaultAllow: false\n", backend.kubeconfig(t, dir)))
	admissionConfig := writeE2EFile(t, filepath.Join(dir, "admission.yaml"),
		"apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ImagePolicyWebhook\n  path: image-policy.yaml\n")
	auditPolicy := writeE2EFile(t, filepath.Join(dir, "audit-policy.yaml"), "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n")
	auditLog := filepath.Join(dir, "audit.log")
	a := startAdmitd(t, filepath.Join(dir, "data"), "--enable-admission-plugins=ImagePolicyWebhook",
		"--admission-control-config-file", admissionConfig, "--audit-log-path", auditLog, "--audit-policy-file", auditPolicy)

	t.Run("ImagePolicyWebhook", func(t *testing.T) { testImagePolicy(t, a, backend, auditLog) })
	t.Run("DefaultStorageClass", func(t *testing.T) { testDefaultStorageClass(t, a) })
	t.Run("CertificateApproval", func(t *testing.T) { testCertificateApproval(t, a) })
}

func podYAML(name, image string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n  containers: [{name: app, image: %q}]\n", name, image)
}

func testImagePolicy(t *testing.T, a *admitd, b *imagePolicyBackend, auditLog string) {
	waitForKubectl(t, a, "-n", "default", "get", "serviceaccount", "default")
	want := `pods "evil" is forbidden: image policy webhook backend denied one or more images: image ` + evilImage + ` is not signed`
	for i := range 2 {
		_, errOut, err := a.Kubectl(t, podYAML("evil", evilImage), "create", "-f", "-")
		if err == nil || !strings.Contains(errOut, "Error from server (Forbidden)") || !strings.Contains(errOut, want) {
			t.Fatalf("create #%d of a pod with a denied image: err=%v stderr=%q, want %q", i+1, err, errOut, want)
		}
		t.Logf("create #%d: %s", i+1, strings.TrimSpace(errOut))
		if n := b.reviews.Load(); n != 1 {
			t.Fatalf("after create #%d the backend answered %d reviews, want 1 (the second from the cache)", i+1, n)
		}
	}
	a.MustKubectl(t, podYAML("web-1", "nginx:1.27"), "create", "-f", "-")
	a.MustKubectl(t, podYAML("web-2", "nginx:1.27"), "create", "-f", "-")
	if n := b.reviews.Load(); n != 2 {
		t.Fatalf("after two pods of an allowed image the backend answered %d reviews, want 2", n)
	}
	waitForAuditAnnotation(t, auditLog, `"imagepolicywebhook.image-policy.k8s.io/checked-by":"e2e-backend"`)
}

func testDefaultStorageClass(t *testing.T, a *admitd) {
	a.MustKubectl(t, `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: example.com/fast
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: slow}
provisioner: example.com/slow
`, "apply", "-f", "-")
	a.MustKubectl(t, `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`, "create", "-f", "-")
	got := a.MustKubectl(t, "", "-n", "default", "get", "pvc", "data", "-o", "jsonpath={.spec.storageClassName}")
	if got != "fast" {
		t.Errorf("PVC storageClassName = %q, want the default class %q", got, "fast")
	}
}

// csrPEM is a PEM certificate request for a new key.
func csrPEM(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func testCertificateApproval(t *testing.T, a *admitd) {
	const signer = "example.com/e2e-signer"
	a.MustKubectl(t, fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: csr-approval}
rules:
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests], verbs: [get, list]}
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests/approval], verbs: [update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: e2e-signer-approver}
rules:
- {apiGroups: [certificates.k8s.io], resources: [signers], resourceNames: [%q], verbs: [approve]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: csr-approval}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: csr-approval}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-signer-approver}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-signer-approver}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}
`, signer), "apply", "-f", "-")
	a.MustKubectl(t, fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: e2e-csr}
spec:
  signerName: %s
  usages: [digital signature, client auth]
  request: %s
`, signer, base64.StdEncoding.EncodeToString(csrPEM(t, "e2e-client"))), "create", "-f", "-")

	_, errOut, err := a.Kubectl(t, "", "--as=alice", "certificate", "approve", "e2e-csr")
	want := `certificatesigningrequests.certificates.k8s.io "e2e-csr" is forbidden: user not permitted to approve requests with signerName "` + signer + `"`
	if err == nil || !strings.Contains(errOut, "Error from server (Forbidden)") || !strings.Contains(errOut, want) {
		t.Fatalf("alice approves: err=%v stderr=%q, want %q", err, errOut, want)
	}
	t.Logf("alice approves: %s", strings.TrimSpace(errOut))
	if out := a.MustKubectl(t, "", "get", "csr", "e2e-csr", "-o", "jsonpath={.status.conditions}"); out != "" {
		t.Fatalf("after alice's refused approval the CSR has conditions %s", out)
	}
	a.MustKubectl(t, "", "--as=bob", "certificate", "approve", "e2e-csr")
	got := a.MustKubectl(t, "", "get", "csr", "e2e-csr", "-o", `jsonpath={.status.conditions[?(@.type=="Approved")].status}`)
	if got != "True" {
		t.Errorf("after bob's approval the Approved condition is %q, want True", got)
	}
}

// TestImagePolicyFailOpen: with defaultAllow and an unreachable backend a
// pod is admitted; as in kube-apiserver, the validating webhook after the
// plugin sees it annotated alpha.image-policy.k8s.io/failed-open, the stored
// pod is not, and the audit log records the failed-open annotation.
func TestImagePolicyFailOpen(t *testing.T) {
	t.Parallel()
	backend := startImagePolicyBackend(t)
	dir := t.TempDir()
	kubeconfig := backend.kubeconfig(t, dir)
	backend.Close() // unreachable from now on
	var seen atomic.Value
	hooks := startWebhookServer(t, func(_ string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		var pod corev1.Pod
		if json.Unmarshal(req.Object.Raw, &pod) == nil && pod.Name == "web" {
			seen.Store(pod.Annotations["alpha.image-policy.k8s.io/failed-open"])
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	admissionConfig := writeE2EFile(t, filepath.Join(dir, "admission.yaml"), fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ImagePolicyWebhook
  configuration:
    imagePolicy: {kubeConfigFile: %q, retryBackoff: 1, defaultAllow: true}
`, kubeconfig))
	auditPolicy := writeE2EFile(t, filepath.Join(dir, "audit-policy.yaml"), "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n")
	auditLog := filepath.Join(dir, "audit.log")
	a := startAdmitd(t, filepath.Join(dir, "data"), "--enable-admission-plugins=ImagePolicyWebhook",
		"--admission-control-config-file", admissionConfig, "--audit-log-path", auditLog, "--audit-policy-file", auditPolicy)
	a.MustKubectl(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: e2e-see-pods}
webhooks:
- name: see.e2e.admitd.io
  clientConfig: {url: "`+hooks.url+`/see", caBundle: "`+hooks.caBundle+`"}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  sideEffects: None
  admissionReviewVersions: [v1]
`, "apply", "-f", "-")
	waitForKubectl(t, a, "-n", "default", "get", "serviceaccount", "default")

	a.MustKubectl(t, podYAML("web", evilImage), "create", "-f", "-")
	if got, _ := seen.Load().(string); got != "true" {
		t.Errorf("the validating webhook saw failed-open = %q, want \"true\"", got)
	}
	stored := a.MustKubectl(t, "", "-n", "default", "get", "pod", "web", "-o", "jsonpath={.metadata.annotations}")
	if strings.Contains(stored, "failed-open") {
		t.Errorf("stored pod annotations = %s, want no failed-open (kube-apiserver stores the pod as admitted)", stored)
	}
	waitForAuditAnnotation(t, auditLog, `"imagepolicywebhook.image-policy.k8s.io/failed-open":"true"`)
}

// TestImagePolicyConfigRefused: the server does not start without the
// plugin's configuration or with a duration out of bounds, with
// kube-apiserver's messages.
func TestImagePolicyConfigRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outOfBounds := writeE2EFile(t, filepath.Join(dir, "admission.yaml"), `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ImagePolicyWebhook
  configuration:
    imagePolicy: {kubeConfigFile: /nonexistent, allowTTL: 5000}
`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, `couldn't init admission plugin "ImagePolicyWebhook": no config specified`},
		{[]string{"--admission-control-config-file", outOfBounds}, `couldn't init admission plugin "ImagePolicyWebhook": valid value is between 1s and 30m0s, got 1h23m20s`},
	} {
		args := append([]string{"--enable-admission-plugins=ImagePolicyWebhook"}, tc.args...)
		a, err := tryStartAdmitd(filepath.Join(t.TempDir(), "data"), args...)
		if err == nil {
			a.Stop()
			t.Fatalf("admitd %v started, want %q", args, tc.want)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("admitd %v: %v, want %q", args, err, tc.want)
		}
	}
}
