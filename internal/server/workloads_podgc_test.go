package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/admitd/admitd/internal/pki"
)

// startPodGCServer starts admitd with the pod garbage collector's passes
// and quarantine shortened, and the controllers given.
func startPodGCServer(t *testing.T, controllers ...string) (kubernetes.Interface, *Server) {
	t.Helper()
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.Controllers = controllers
	o.PodGC = PodGCOptions{CheckPeriod: 100 * time.Millisecond, QuarantineTime: 200 * time.Millisecond}
	s, admin := startWith(t, o)
	return kubernetes.NewForConfigOrDie(admin), s
}

// A pod bound to a node that does not exist is failed (DisruptionTarget,
// DeletionByPodGC) and deleted by the pod garbage collector, as its own
// service account; with --controllers=*,-podgc it stays.
func TestPodGCDeletesOrphans(t *testing.T) {
	for _, tc := range []struct {
		controllers []string
		deleted     bool
	}{{nil, true}, {[]string{"*", "-podgc"}, false}} {
		c, _ := startPodGCServer(t, tc.controllers...)
		readyNamespace(t, c, "gc", nil)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Finalizers: []string{"example.com/hold"}},
			Spec: corev1.PodSpec{NodeName: "gone", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		if _, err := c.CoreV1().Pods("gc").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if !tc.deleted {
			time.Sleep(time.Second)
			p, err := c.CoreV1().Pods("gc").Get(t.Context(), "orphan", metav1.GetOptions{})
			if err != nil || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending {
				t.Errorf("with %v: pod %v (%v), want it untouched", tc.controllers, p, err)
			}
			continue
		}
		eventually(t, "the orphan failed and deleted", func() (bool, string) {
			p, err := c.CoreV1().Pods("gc").Get(t.Context(), "orphan", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return p.DeletionTimestamp != nil && p.Status.Phase == corev1.PodFailed, fmt.Sprintf("phase %s, deletion %v", p.Status.Phase, p.DeletionTimestamp)
		})
		p, _ := c.CoreV1().Pods("gc").Get(t.Context(), "orphan", metav1.GetOptions{})
		var cond *corev1.PodCondition
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
				cond = &p.Status.Conditions[i]
			}
		}
		if cond == nil || cond.Reason != "DeletionByPodGC" || cond.Message != "PodGC: node no longer exists" || *p.DeletionGracePeriodSeconds != 0 {
			t.Errorf("pod conditions %+v, grace %v; want DisruptionTarget/DeletionByPodGC, grace 0", p.Status.Conditions, p.DeletionGracePeriodSeconds)
		}
		managers := ""
		for _, m := range p.ManagedFields {
			managers += m.Manager + "/" + m.Subresource + " "
		}
		if !strings.Contains(managers, "kube-controller-manager/status") {
			t.Errorf("managed fields %q, want kube-controller-manager's status patch", managers)
		}
	}
}

func csrFor(t *testing.T, name string, subject pkix.Name) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:  []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
			Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})}}
}

// An approved client CSR gets a certificate from the server's own CA
// (the one client certificates are verified with); with
// --controllers=*,-csrsigning it gets none.
func TestCSRSignedWithServerCA(t *testing.T) {
	for _, tc := range []struct {
		controllers []string
		signed      bool
	}{{nil, true}, {[]string{"*", "-csrsigning"}, false}} {
		c, s := startPodGCServer(t, tc.controllers...)
		csr, err := c.CertificatesV1().CertificateSigningRequests().Create(t.Context(), csrFor(t, "alice", pkix.Name{CommonName: "alice"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test"}}
		if _, err := c.CertificatesV1().CertificateSigningRequests().UpdateApproval(t.Context(), "alice", csr, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if !tc.signed {
			time.Sleep(time.Second)
			if got, err := c.CertificatesV1().CertificateSigningRequests().Get(t.Context(), "alice", metav1.GetOptions{}); err != nil || len(got.Status.Certificate) > 0 {
				t.Errorf("with %v: certificate %q (%v), want none", tc.controllers, got.Status.Certificate, err)
			}
			continue
		}
		var certPEM []byte
		eventually(t, "the certificate", func() (bool, string) {
			got, err := c.CertificatesV1().CertificateSigningRequests().Get(t.Context(), "alice", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			certPEM = got.Status.Certificate
			return len(certPEM) > 0, fmt.Sprint(got.Status.Conditions)
		})
		block, _ := pem.Decode(certPEM)
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(s.CAPEM)
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil || cert.Subject.CommonName != "alice" {
			t.Errorf("certificate of %v: %v; want alice's, from the server's CA", cert.Subject, err)
		}
	}
}

// The signing files are chosen and checked as kube-controller-manager
// does.
func TestSignerCAs(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.NewCA("files")
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, _ := ca.KeyPEM()
	certFile, keyFile := filepath.Join(dir, "c.crt"), filepath.Join(dir, "c.key")
	if err := errors.Join(os.WriteFile(certFile, ca.CertPEM, 0o600), os.WriteFile(keyFile, keyPEM, 0o600)); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, "pki")
	if _, err := pki.EnsureServingBundle(own, []string{"localhost"}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name    string
		o       CSRSigningOptions
		signers string
		err     string
	}{
		{"none: the server's CA, for client certificates only", CSRSigningOptions{}, "kube-apiserver-client-kubelet,kube-apiserver-client", ""},
		{"cluster files", CSRSigningOptions{ClusterSigningCertFile: certFile, ClusterSigningKeyFile: keyFile}, "kubelet-serving,kube-apiserver-client-kubelet,kube-apiserver-client,legacy-unknown", ""},
		{"cluster cert only: skipped", CSRSigningOptions{ClusterSigningCertFile: certFile}, "", ""},
		{"one signer", CSRSigningOptions{KubeAPIServerClientCertFile: certFile, KubeAPIServerClientKeyFile: keyFile}, "kube-apiserver-client", ""},
		{"missing file", CSRSigningOptions{ClusterSigningCertFile: certFile + "x", ClusterSigningKeyFile: keyFile}, "", "failed to init kubernetes.io/kubelet-serving certificate controller: error reading CA cert file"},
	} {
		cas, err := tc.o.signerCAs(own, log)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		var signers []string
		for _, s := range []string{"kubelet-serving", "kube-apiserver-client-kubelet", "kube-apiserver-client", "legacy-unknown"} {
			if cas["kubernetes.io/"+s] != nil {
				signers = append(signers, s)
			}
		}
		if got := strings.Join(signers, ","); err != nil || got != tc.signers {
			t.Errorf("%s: signers %q (%v), want %q", tc.name, got, err, tc.signers)
		}
	}
	for _, tc := range []struct {
		o    CSRSigningOptions
		want string
	}{
		{CSRSigningOptions{ClusterSigningCertFile: "a", KubeletServingCertFile: "b", KubeletServingKeyFile: "c"}, "cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time"},
		{CSRSigningOptions{KubeletClientKeyFile: "k"}, `"cluster-signing-kube-apiserver-client": cannot specify key without cert`},
		{CSRSigningOptions{KubeAPIServerClientCertFile: "c"}, `"cluster-signing-kube-apiserver": cannot specify cert without key`},
	} {
		if err := tc.o.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("Validate(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
	if err := (CSRSigningOptions{ClusterSigningCertFile: "a", ClusterSigningKeyFile: "b"}).Validate(); err != nil {
		t.Errorf("Validate of the cluster files: %v", err)
	}
}
