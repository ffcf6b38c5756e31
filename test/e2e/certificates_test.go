package e2e

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"
)

// caPEM is a new self-signed CA certificate, indented for a YAML block.
func caPEM(t *testing.T) string {
	t.Helper()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "example-ca"}, NotBefore: time.Now(),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		t.Fatal(err)
	}
	block := strings.TrimSpace(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	return "    " + strings.ReplaceAll(block, "\n", "\n    ")
}

// stubCSR is a base64 PKCS#10 request for a new Ed25519 key.
func stubCSR(t *testing.T) string {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(der)
}

// certificatesObjects are the objects recorded against kube-apiserver
// 1.37.2: two bundles (one for a signer) and a pod certificate request.
func certificatesObjects(t *testing.T) string {
	ca := caPEM(t)
	return fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: example-bundle}
spec:
  trustBundle: |
%[1]s
---
apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: "example.com:foo:bundle1"}
spec:
  signerName: example.com/foo
  trustBundle: |
%[1]s
---
apiVersion: certificates.k8s.io/v1
kind: PodCertificateRequest
metadata: {name: pcr-1, namespace: default}
spec:
  signerName: example.com/foo
  podName: pod-1
  podUID: uid-1
  serviceAccountName: default
  serviceAccountUID: sa-uid
  nodeName: node-1
  nodeUID: node-uid
  stubPKCS10Request: %[2]s
  unverifiedUserAnnotations: {example.com/a: "1"}
`, ca, stubCSR(t))
}

const badCertificatesObjects = `apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: x}
spec:
  signerName: example.com/foo
  trustBundle: garbage
---
apiVersion: certificates.k8s.io/v1
kind: PodCertificateRequest
metadata: {name: pcr-bad, namespace: default}
spec:
  signerName: foo
  podName: Bad_Pod
`

const bundleWriters = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ctb-writer}
rules:
- {apiGroups: [certificates.k8s.io], resources: [clustertrustbundles], verbs: [create, get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ctb-attester}
rules:
- {apiGroups: [certificates.k8s.io], resources: [signers], resourceNames: [example.com/bar], verbs: [attest]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ctb-writer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ctb-writer}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ctb-attester}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ctb-attester}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}
`

const dnsSubdomainMsg = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`

// TestKubectlCertificatesKinds: kubectl creates, lists and changes
// ClusterTrustBundles and PodCertificateRequests and sees what
// kube-apiserver 1.37.2 showed for the same commands (recorded side by
// side with the real server): discovery, columns (no Age, the
// annotations column without -o wide), the default expiration, errors of
// invalid objects and changes, the ClusterTrustBundleAttest refusal of a
// user without "attest" and the create of one with it, and a denial
// through the status subresource.
func TestKubectlCertificatesKinds(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	resources := a.MustKubectl(t, "", "api-resources", "-o", "wide", "--api-group=certificates.k8s.io")
	verbs := "create,delete,deletecollection,get,list,patch,update,watch"
	for _, want := range [][]string{
		{"clustertrustbundles", "certificates.k8s.io/v1", "false", "ClusterTrustBundle", verbs},
		{"podcertificaterequests", "certificates.k8s.io/v1", "true", "PodCertificateRequest", verbs},
	} {
		if !hasLine(resources, want) {
			t.Errorf("kubectl api-resources: no line %q in\n%s", want, resources)
		}
	}
	a.MustKubectl(t, certificatesObjects(t), "apply", "-f", "-")
	out := a.MustKubectl(t, "", "get", "clustertrustbundles,podcertificaterequests", "-A")
	for _, want := range [][]string{
		{"NAME", "SIGNERNAME"},
		{"clustertrustbundle.certificates.k8s.io/example-bundle", "<none>"},
		{"clustertrustbundle.certificates.k8s.io/example.com:foo:bundle1", "example.com/foo"},
		{"NAMESPACE", "NAME", "PODNAME", "SERVICEACCOUNTNAME", "NODENAME", "SIGNERNAME", "STATE", "UNVERIFIEDUSERANNOTATIONS"},
		{"default", "podcertificaterequest.certificates.k8s.io/pcr-1", "pod-1", "default", "node-1", "example.com/foo", "Pending", "example.com/a=1"},
	} {
		if !hasLine(out, want) {
			t.Errorf("kubectl get clustertrustbundles,podcertificaterequests: no line %q in\n%s", want, out)
		}
	}
	if got := a.MustKubectl(t, "", "get", "podcertificaterequest", "pcr-1", "-n", "default", "-o", "jsonpath={.spec.maxExpirationSeconds},{.status}"); got != "86400,{}" {
		t.Errorf("request's expiration and status = %q, want 86400,{}", got)
	}
	checkCertificatesErrors(t, a)
	checkAttest(t, a)
	a.MustKubectl(t, "", "patch", "podcertificaterequest", "pcr-1", "-n", "default", "--subresource=status", "--type=merge", "-p",
		`{"status":{"conditions":[{"type":"Denied","status":"True","reason":"Nope","message":"no","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	out = a.MustKubectl(t, "", "get", "podcertificaterequests", "-n", "default")
	if want := []string{"pcr-1", "pod-1", "default", "node-1", "example.com/foo", "Denied", "example.com/a=1"}; !hasLine(out, want) {
		t.Errorf("kubectl get podcertificaterequests after the denial: no line %q in\n%s", want, out)
	}
}

// checkCertificatesErrors: invalid objects and changes, with the errors
// kube-apiserver 1.37.2 printed.
func checkCertificatesErrors(t *testing.T, a *admitd) {
	t.Helper()
	_, errOut, err := a.Kubectl(t, badCertificatesObjects, "create", "-f", "-")
	for _, want := range []string{
		`ClusterTrustBundle.certificates.k8s.io "x" is invalid: [metadata.name: Invalid value: "x": ClusterTrustBundle for signerName example.com/foo must be named with prefix example.com:foo:, spec.trustBundle: Invalid value: "<value omitted>": at least one trust anchor must be provided]`,
		`PodCertificateRequest.certificates.k8s.io "pcr-bad" is invalid: [spec.signerName: Invalid value: "foo": must be a fully qualified domain and path of the form 'example.com/signer-name', spec.podName: Invalid value: "Bad_Pod": ` +
			dnsSubdomainMsg + `, spec.podUID: Invalid value: "": must not be empty, spec.serviceAccountName: Invalid value: "": ` + dnsSubdomainMsg +
			`, spec.serviceAccountUID: Invalid value: "": must not be empty, spec.nodeName: Invalid value: "": ` + dnsSubdomainMsg +
			`, spec.nodeUID: Invalid value: "": must not be empty, spec: Invalid value: exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set]`,
	} {
		if err == nil || !strings.Contains(errOut, want) {
			t.Errorf("kubectl create of invalid objects: %v, stderr\n%s\nwant\n%s", err, errOut, want)
		}
	}
	_, errOut, err = a.Kubectl(t, "", "patch", "clustertrustbundle", "example.com:foo:bundle1", "--type=merge", "-p", `{"spec":{"signerName":"example.com/baz"}}`)
	want := `The ClusterTrustBundle "example.com:foo:bundle1" is invalid: 
* metadata.name: Invalid value: "example.com:foo:bundle1": ClusterTrustBundle for signerName example.com/baz must be named with prefix example.com:baz:
* spec.signerName: Invalid value: "example.com/baz": field is immutable`
	if err == nil || strings.TrimSpace(errOut) != want {
		t.Errorf("kubectl patch of a bundle's signer: %v, stderr\n%s\nwant\n%s", err, errOut, want)
	}
	_, errOut, err = a.Kubectl(t, "", "patch", "podcertificaterequest", "pcr-1", "-n", "default", "--type=merge", "-p", `{"spec":{"podName":"pod-2"}}`)
	if want := `The PodCertificateRequest "pcr-1" is invalid: spec: Invalid value: {"SignerName":"example.com/foo","PodName":"pod-2",`; err == nil ||
		!strings.HasPrefix(errOut, want) || !strings.HasSuffix(strings.TrimSpace(errOut), `"UnverifiedUserAnnotations":{"example.com/a":"1"}}: field is immutable`) {
		t.Errorf("kubectl patch of a request's spec: %v, stderr\n%s\nwant %s...: field is immutable", err, errOut, want)
	}
}

// checkAttest: alice may create bundles but not attest for
// example.com/bar; bob may do both.
func checkAttest(t *testing.T, a *admitd) {
	t.Helper()
	a.MustKubectl(t, bundleWriters, "apply", "-f", "-")
	bundle := fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: "example.com:bar:b1"}
spec:
  signerName: example.com/bar
  trustBundle: |
%s
`, caPEM(t))
	_, errOut, err := a.Kubectl(t, bundle, "--as=alice", "create", "-f", "-")
	want := `clustertrustbundles.certificates.k8s.io "example.com:bar:b1" is forbidden: user not permitted to attest for signerName "example.com/bar"`
	if err == nil || !strings.Contains(errOut, "Error from server (Forbidden): error when creating \"STDIN\": "+want) {
		t.Errorf("kubectl --as=alice create of a signed bundle: %v, stderr\n%s\nwant %s", err, errOut, want)
	}
	if out := a.MustKubectl(t, bundle, "--as=bob", "create", "-f", "-"); !strings.Contains(out, "clustertrustbundle.certificates.k8s.io/example.com:bar:b1 created") {
		t.Errorf("kubectl --as=bob create of a signed bundle = %q, want created", out)
	}
}
