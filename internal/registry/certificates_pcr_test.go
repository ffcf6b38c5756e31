package registry

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func podCertRequest(stub []byte) *certificatesv1.PodCertificateRequest {
	return &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "pcr-1", Namespace: "default", ResourceVersion: "1"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/foo", PodName: "pod-1", PodUID: "uid-1",
			ServiceAccountName: "default", ServiceAccountUID: "sa-uid", NodeName: "node-1", NodeUID: "node-uid",
			StubPKCS10Request: stub, UnverifiedUserAnnotations: map[string]string{"example.com/a": "1"}}}
}

const dnsSubdomainMsg = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`

func TestValidatePodCertificateRequest(t *testing.T) {
	stub, _ := testStubRequest(t)
	good := podCertRequest(stub)
	if errs := createErrors(t, good); len(errs) > 0 || *good.Spec.MaxExpirationSeconds != 86400 {
		t.Fatalf("create: %v, maxExpirationSeconds %v; want allowed, defaulted to 86400", errs, good.Spec.MaxExpirationSeconds)
	}
	// Recorded from kube-apiserver 1.37.2.
	bad := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "pcr-bad", Namespace: "default"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "foo", PodName: "Bad_Pod"}}
	want := `[spec.signerName: Invalid value: "foo": must be a fully qualified domain and path of the form 'example.com/signer-name', ` +
		`spec.podName: Invalid value: "Bad_Pod": ` + dnsSubdomainMsg + `, spec.podUID: Invalid value: "": must not be empty, ` +
		`spec.serviceAccountName: Invalid value: "": ` + dnsSubdomainMsg + `, spec.serviceAccountUID: Invalid value: "": must not be empty, ` +
		`spec.nodeName: Invalid value: "": ` + dnsSubdomainMsg + `, spec.nodeUID: Invalid value: "": must not be empty, ` +
		`spec: Invalid value: exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set]`
	if got := aggregate(createErrors(t, bad)); got != want {
		t.Errorf("create errors =\n%s\nwant\n%s", got, want)
	}
	kube := podCertRequest([]byte("junk"))
	kube.Spec.SignerName = "kubernetes.io/foo"
	kube.Spec.MaxExpirationSeconds = ptr.To[int32](86401)
	want = `[spec.maxExpirationSeconds: Invalid value: 86401: must be in the range [3600, 86400], ` +
		`spec.stubPKCS10Request: Invalid value: must be a valid PKCS#10 CSR]`
	if got := aggregate(createErrors(t, kube)); got != want {
		t.Errorf("kubernetes signer errors =\n%s\nwant\n%s", got, want)
	}
}

func TestPodCertificateRequestUpdate(t *testing.T) {
	stub, _ := testStubRequest(t)
	old := podCertRequest(stub)
	r := resourceFor(t, old)
	r.Default(old)
	moved := old.DeepCopy()
	moved.Spec.PodName = "pod-2"
	moved.Status.Conditions = []metav1.Condition{{Type: "Issued"}}
	errs := PrepareUpdate(r, moved, old)
	// Recorded from kube-apiserver 1.37.2 (for its request).
	want := `spec: Invalid value: {"SignerName":"example.com/foo","PodName":"pod-2","PodUID":"uid-1","ServiceAccountName":"default",` +
		`"ServiceAccountUID":"sa-uid","NodeName":"node-1","NodeUID":"node-uid","MaxExpirationSeconds":86400,"PKIXPublicKey":null,` +
		`"ProofOfPossession":null,"StubPKCS10Request":"` + b64(stub) + `","UnverifiedUserAnnotations":{"example.com/a":"1"}}: field is immutable`
	if got := aggregate(errs); got != want || moved.Status.Conditions != nil {
		t.Errorf("spec change =\n%s\nstatus %+v; want\n%s\nand the stored status", got, moved.Status, want)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestPodCertificateRequestStatus(t *testing.T) {
	stub, key := testStubRequest(t)
	old := podCertRequest(stub)
	r := resourceFor(t, old)
	r.Default(old)
	write := func(edit func(s *certificatesv1.PodCertificateRequestStatus)) string {
		t.Helper()
		obj := old.DeepCopy()
		obj.Spec.PodName = "ignored"
		edit(&obj.Status)
		out := PrepareForUpdate(r, "status", obj, old)
		if got := out.(*certificatesv1.PodCertificateRequest).Spec.PodName; got != "pod-1" {
			t.Errorf("status write kept spec.podName %q, want the stored pod-1", got)
		}
		return aggregate(r.ValidateSubresourceChange("status", out, old))
	}
	now := time.Now().Truncate(time.Second)
	chain := issue(t, key.Public().(ed25519.PublicKey), now, now.Add(2*time.Hour))
	for _, tc := range []struct {
		name string
		edit func(s *certificatesv1.PodCertificateRequestStatus)
		want string
	}{
		{"denied", func(s *certificatesv1.PodCertificateRequestStatus) {
			s.Conditions = []metav1.Condition{{Type: "Denied", Status: "True", Reason: "Nope", LastTransitionTime: metav1.Now()}}
		}, ""},
		{"denied with a chain", func(s *certificatesv1.PodCertificateRequestStatus) {
			s.Conditions = []metav1.Condition{{Type: "Denied", Status: "True", Reason: "Nope", LastTransitionTime: metav1.Now()}}
			s.CertificateChain = "x"
		}, "status: Invalid value: non-condition status fields must be empty when denying or failing the PodCertificateRequest"},
		{"unknown and false", func(s *certificatesv1.PodCertificateRequestStatus) {
			s.Conditions = []metav1.Condition{{Type: "Odd", Status: "True", Reason: "R", LastTransitionTime: metav1.Now()},
				{Type: "Failed", Status: "False", Reason: "R", LastTransitionTime: metav1.Now()}}
		}, `[status.conditions.[0].type: Unsupported value: "Odd": supported values: "Issued", "Denied", "Failed", ` +
			`status.conditions.[1].status: Unsupported value: "False": supported values: "True"]`},
		{"not terminal", func(s *certificatesv1.PodCertificateRequestStatus) { s.CertificateChain = "x" },
			`status: Invalid value: status is immutable unless transitioning to "Issued", "Denied", or "Failed"`},
		{"issued", func(s *certificatesv1.PodCertificateRequestStatus) {
			s.Conditions = []metav1.Condition{{Type: "Issued", Status: "True", Reason: "R", LastTransitionTime: metav1.Now()}}
			s.CertificateChain = chain
			s.NotBefore, s.NotAfter = &metav1.Time{Time: now}, &metav1.Time{Time: now.Add(2 * time.Hour)}
			s.BeginRefreshAt = &metav1.Time{Time: now.Add(time.Hour)}
		}, ""},
		{"issued without times", func(s *certificatesv1.PodCertificateRequestStatus) {
			s.Conditions = []metav1.Condition{{Type: "Issued", Status: "True", Reason: "R", LastTransitionTime: metav1.Now()}}
			s.CertificateChain = chain
		}, "[status.notBefore: Required value: must be present and consistent with the issued certificate, " +
			"status.notAfter: Required value: must be present and consistent with the issued certificate, " +
			"status.beginRefreshAt: Required value: must be present and in the range [notbefore+10min, notafter-10min]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := write(tc.edit); got != tc.want {
				t.Errorf("status write errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	changed := old.DeepCopy()
	changed.Status.Conditions = []metav1.Condition{{Type: "Denied"}}
	check := r.SignerCheckFor("status", changed, old)
	if check == nil || check.Verb != "sign" || check.Signer != "example.com/foo" || r.SignerCheckFor("status", old.DeepCopy(), old) != nil {
		t.Errorf("SignerCheckFor = %+v, want sign on example.com/foo for a status change and nothing otherwise", check)
	}
	want := `spec.signerName: Forbidden: User "bob" is not permitted to "sign" for signer "example.com/foo"`
	if got := aggregate(check.Refused("bob")); got != want {
		t.Errorf("refusal = %s, want %s", got, want)
	}
}

// issue is a PEM certificate for pub from notBefore to notAfter, signed by
// a throwaway key.
func issue(t *testing.T, pub ed25519.PublicKey, notBefore, notAfter time.Time) string {
	t.Helper()
	_, signer, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), NotBefore: notBefore, NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, signer)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
