package workloads

import (
	"github.com/admitd/admitd/test/e2e/harness"

	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// csrRecordKubeconfig, when set, is the kubeconfig of kube-apiserver +
// kube-controller-manager 1.37.2 (KCM=1 start.sh): the CSR session runs
// there and is written to csrSessionFile.
const (
	csrRecordKubeconfig = "CSR_RECORD_KUBECONFIG"
	csrSessionFile      = "testdata/csrsigning/kcm-1.37.2.txt"
)

// csrRequest is a request of the CSR session: a new key, and the CSR
// object asking signer for a certificate of subject and names.
type csrRequest struct {
	name, signer string
	subject      pkix.Name
	dnsNames     []string
	ips          []net.IP
	usages       []string
	seconds      int  // spec.expirationSeconds; 0: none
	autoApproved bool // approved by the CSR approver, not kubectl
	key          *ecdsa.PrivateKey
}

func (r *csrRequest) manifest(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	r.key = key
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: r.subject, DNSNames: r.dnsNames, IPAddresses: r.ips}, key)
	if err != nil {
		t.Fatal(err)
	}
	request := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	m := fmt.Sprintf("apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: %s}\nspec:\n  request: %s\n  signerName: %s\n  usages: [%s]\n",
		r.name, request, r.signer, strings.Join(r.usages, ", "))
	if r.seconds > 0 {
		m += fmt.Sprintf("  expirationSeconds: %d\n", r.seconds)
	}
	return m
}

// The requests of the session: a user's client certificate (a day), a
// short one (the 10-minute floor), a kubelet serving certificate, a
// kubelet client certificate (which the approver approves), and two the
// signers refuse.
func csrSessionRequests() []*csrRequest {
	node := pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	return []*csrRequest{
		{name: "alice", signer: "kubernetes.io/kube-apiserver-client", subject: pkix.Name{CommonName: "alice", Organization: []string{"dev", "qa"}},
			usages: []string{"digital signature", "client auth"}, seconds: 86400},
		{name: "short", signer: "kubernetes.io/kube-apiserver-client", subject: pkix.Name{CommonName: "short"}, usages: []string{"client auth"}, seconds: 600},
		{name: "serving", signer: "kubernetes.io/kubelet-serving", subject: node, dnsNames: []string{"n1.example"}, ips: []net.IP{net.ParseIP("10.0.0.7")},
			usages: []string{"digital signature", "server auth"}, seconds: 3600},
		{name: "kubelet-client", signer: "kubernetes.io/kube-apiserver-client-kubelet", subject: node, usages: []string{"digital signature", "client auth"},
			seconds: 3600, autoApproved: true},
		{name: "server-usage", signer: "kubernetes.io/kube-apiserver-client", subject: pkix.Name{CommonName: "bob"}, usages: []string{"server auth"}},
		{name: "serving-no-names", signer: "kubernetes.io/kubelet-serving", subject: node, usages: []string{"digital signature", "server auth"}},
	}
}

var credentialIDHex = regexp.MustCompile(`X509SHA256=[0-9a-f]+`)

// csrTable is kubectl get csr's table, its columns separated by one
// space, without ages and with the requestor (the admin, whose name
// differs between the servers) as <admin>.
func csrTable(out string) string {
	var lines []string
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if i > 0 && len(f) == 6 {
			f[1], f[3] = "<age>", "<admin>"
		}
		lines = append(lines, strings.Join(f, " "))
	}
	return strings.Join(lines, "\n") + "\n"
}

// The CSR session recorded on kube-apiserver + kube-controller-manager
// 1.37.2 (testdata/csrsigning) and replayed on admitd: kubectl creates the
// requests, approves them (kubectl certificate approve), and each ends as
// there: issued (status.certificate a certificate of the request's
// subject, names, usages and duration, from the CA client certificates
// are verified with) or failed with SignerValidationFailure and upstream's
// message, the kubelet's approved by the approver (AutoApproved) without
// kubectl; `kubectl get csr` shows the same columns; and the issued client
// certificates authenticate: `kubectl auth whoami` names their subjects.
func TestCSRSigningSessionMatchesKCM(t *testing.T) {
	t.Parallel()
	recordTo := os.Getenv(csrRecordKubeconfig)
	var a *admitd
	dataDir := t.TempDir()
	if recordTo != "" {
		a = &admitd{Kubeconfig: recordTo}
	} else {
		a = startAdmitd(t, dataDir, signWithServerCA(dataDir)...)
	}
	requests := csrSessionRequests()
	var got []string
	for _, r := range requests {
		got = append(got, a.MustKubectl(t, r.manifest(t), "create", "-f", "-"))
	}
	tooShort := &csrRequest{name: "too-short", signer: "kubernetes.io/kube-apiserver-client", usages: []string{"client auth"}, seconds: 599}
	if _, errOut, err := a.Kubectl(t, tooShort.manifest(t), "create", "-f", "-"); err == nil {
		t.Error("a CSR of expirationSeconds 599 was accepted")
	} else {
		got = append(got, "## expirationSeconds 599\n"+errOut)
	}
	for _, r := range requests {
		if !r.autoApproved {
			got = append(got, a.MustKubectl(t, "", "certificate", "approve", r.name))
		}
	}
	for _, r := range requests {
		waitCSRDone(t, a, r.name)
	}
	got = append(got, "## kubectl get csr\n"+csrTable(a.MustKubectl(t, "", "get", "csr", "--sort-by=.metadata.name")))
	for _, r := range requests {
		got = append(got, "## "+r.name+"\n"+a.MustKubectl(t, "", "get", "csr", r.name, "-o",
			`jsonpath={range .status.conditions[*]}{.type} {.status} {.reason}: {.message}{"\n"}{end}`))
		got = append(got, describeIssued(t, a, r))
	}
	for _, r := range []*csrRequest{requests[0], requests[3]} {
		got = append(got, "## auth whoami as "+r.name+"\n"+credentialIDHex.ReplaceAllString(whoamiWith(t, a, r), "X509SHA256=<hash>"))
	}
	harness.RecordOrCompare(t, recordTo != "", csrSessionFile, strings.Join(got, ""))
}

// signWithServerCA are the flags that make admitd's own CA in dataDir
// sign for the three signers, as kube-controller-manager with
// --cluster-signing-{cert,key}-file of the cluster's CA (how the session
// was recorded). Without flags admitd signs no kubelet-serving
// certificate.
func signWithServerCA(dataDir string) []string {
	var flags []string
	for _, signer := range []string{"kubelet-serving", "kubelet-client", "kube-apiserver-client"} {
		flags = append(flags, "--cluster-signing-"+signer+"-cert-file="+filepath.Join(dataDir, "pki", "ca.crt"),
			"--cluster-signing-"+signer+"-key-file="+filepath.Join(dataDir, "pki", "ca.key"))
	}
	return flags
}

// waitCSRDone waits until the CSR has a certificate or a Failed
// condition.
func waitCSRDone(t *testing.T, a *admitd, name string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out := a.MustKubectl(t, "", "get", "csr", name, "-o", `jsonpath={.status.certificate}{range .status.conditions[?(@.type=="Failed")]}failed{end}`)
		if out != "" {
			return
		}
	}
	t.Fatalf("CSR %s got neither a certificate nor a Failed condition", name)
}

// describeIssued is what the CSR's certificate says, in a few lines (or
// that it has none).
func describeIssued(t *testing.T, a *admitd, r *csrRequest) string {
	t.Helper()
	out := a.MustKubectl(t, "", "get", "csr", r.name, "-o", "jsonpath={.status.certificate}")
	if out == "" {
		return "no certificate\n"
	}
	certPEM, err := base64.StdEncoding.DecodeString(out)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("status.certificate of %s is not a PEM certificate: %q", r.name, certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("subject=%s dns=%v ips=%v\nvalid=%v keyUsage=%d extKeyUsage=%v isCA=%t basicConstraints=%t\nkey of the request=%t verifies with the cluster CA=%t\n",
		cert.Subject, cert.DNSNames, cert.IPAddresses, cert.NotAfter.Sub(cert.NotBefore), cert.KeyUsage, cert.ExtKeyUsage, cert.IsCA, cert.BasicConstraintsValid,
		r.key.PublicKey.Equal(cert.PublicKey), verifiesWithClusterCA(t, a, cert))
}

func verifiesWithClusterCA(t *testing.T, a *admitd, cert *x509.Certificate) bool {
	cfg := a.RestConfig(t)
	caPEM := cfg.CAData
	if len(caPEM) == 0 {
		var err error
		if caPEM, err = os.ReadFile(cfg.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	_, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err == nil
}

// whoamiWith runs kubectl auth whoami with r's key and issued certificate.
func whoamiWith(t *testing.T, a *admitd, r *csrRequest) string {
	t.Helper()
	out := a.MustKubectl(t, "", "get", "csr", r.name, "-o", "jsonpath={.status.certificate}")
	certPEM, err := base64.StdEncoding.DecodeString(out)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(r.key)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(a.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range cfg.AuthInfos {
		auth.ClientCertificate, auth.ClientKey, auth.Token = "", "", ""
		auth.ClientCertificateData = certPEM
		auth.ClientKeyData = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	}
	path := filepath.Join(t.TempDir(), r.name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	user := &admitd{Kubeconfig: path}
	return user.MustKubectl(t, "", "auth", "whoami")
}
