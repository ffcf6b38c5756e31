package certificates

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

var (
	csrs    = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}
	bundles = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1beta1", Resource: "clustertrustbundles"}
)

type csrEdit func(*certificatesv1.CertificateSigningRequest)

func csr(signer string, edits ...csrEdit) *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer}}
	for _, e := range edits {
		e(c)
	}
	return c
}

func withCert(b []byte) csrEdit {
	return func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = b }
}

func withCondition(typ certificatesv1.RequestConditionType) csrEdit {
	return func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: typ, Status: "True"})
	}
}

func withRequest(b []byte) csrEdit {
	return func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = b }
}

func bundle(signer string, edits ...func(*certificatesv1beta1.ClusterTrustBundle)) *certificatesv1beta1.ClusterTrustBundle {
	b := &certificatesv1beta1.ClusterTrustBundle{Spec: certificatesv1beta1.ClusterTrustBundleSpec{SignerName: signer}}
	for _, e := range edits {
		e(b)
	}
	return b
}

// pemWithGroups is a PEM certificate request for the organizations.
func pemWithGroups(t testing.TB, orgs ...string) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "u", Organization: orgs}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

type tcase struct {
	name   string
	plugin pluginName
	policy policy
	gate   bool
	req    request
}

func update(resource schema.GroupVersionResource, sub string, obj, old any) request {
	r := request{op: admission.Update, resource: resource, subresource: sub, name: "n", user: "alice"}
	r.obj, r.old = object(obj), object(old)
	return r
}

func create(resource schema.GroupVersionResource, sub string, obj any) request {
	r := request{op: admission.Create, resource: resource, subresource: sub, name: "n", user: "alice"}
	r.obj = object(obj)
	return r
}

func failing(err string) policy {
	p := allowing("none")
	p.err = errors.New(err)
	return p
}

// upstreamTables are upstream's own test cases (admission_test.go of each
// plugin), with versioned objects.
func upstreamTables(t testing.TB) []tcase {
	list := &certificatesv1.CertificateSigningRequestList{}
	return []tcase{
		// approval
		{"approval: wrong type", approval, allowing("approve"), false, update(csrs, "approval", nil, list)},
		{"approval: reject requests if looking up permissions fails", approval, failing("forced error"), false, update(csrs, "approval", nil, csr("abc.com/xyz"))},
		{"approval: allow if authorized for specific signerName", approval, allowing("approve", "abc.com/xyz"), false, update(csrs, "approval", nil, csr("abc.com/xyz"))},
		{"approval: allow if authorized with wildcard", approval, allowing("approve", "abc.com/*"), false, update(csrs, "approval", nil, csr("abc.com/xyz"))},
		{"approval: deny without permission for this signerName", approval, allowing("approve", "notabc.com/xyz"), false, update(csrs, "approval", nil, csr("abc.com/xyz"))},
		{"approval: deny update of signerName to a permitted one", approval, allowing("approve", "allowed.com/xyz"), false,
			update(csrs, "approval", csr("allowed.com/xyz"), csr("notallowed.com/xyz"))},
		// signing
		{"signing: wrong type", signing, allowing("sign"), false, update(csrs, "status", list, list)},
		{"signing: allowed if certificate and conditions unchanged", signing, failing("faked error"), false,
			update(csrs, "status", csr("", withCert([]byte("data"))), csr("", withCert([]byte("data"))))},
		{"signing: deny if authz lookup fails on certificate change", signing, failing("test"), false,
			update(csrs, "status", csr("abc.com/xyz", withCert([]byte("data"))), csr("abc.com/xyz"))},
		{"signing: deny if authz lookup fails on condition change", signing, failing("test"), false,
			update(csrs, "status", csr("abc.com/xyz", withCondition(certificatesv1.CertificateFailed)), csr("abc.com/xyz"))},
		{"signing: allow if authorized for specific signerName", signing, allowing("sign", "abc.com/xyz"), false,
			update(csrs, "status", csr("abc.com/xyz", withCert([]byte("data"))), csr("abc.com/xyz"))},
		{"signing: allow if authorized with wildcard", signing, allowing("sign", "abc.com/*"), false,
			update(csrs, "status", csr("abc.com/xyz", withCert([]byte("data"))), csr("abc.com/xyz"))},
		{"signing: deny without permission for this signerName", signing, allowing("sign", "notabc.com/xyz"), false,
			update(csrs, "status", csr("abc.com/xyz", withCert([]byte("data"))), csr("abc.com/xyz"))},
		{"signing: deny update of signerName to a permitted one", signing, allowing("sign", "allowed.com/xyz"), false,
			update(csrs, "status", csr("allowed.com/xyz", withCert([]byte("data"))), csr("notallowed.com/xyz"))},
		// subject restriction
		{"subject: ignored resource", subject, policy{}, false, create(schema.GroupVersionResource{Group: "foo", Version: "v1", Resource: "bar"}, "", nil)},
		{"subject: ignored subresource", subject, policy{}, false, create(csrs, "approve", nil)},
		{"subject: wrong type", subject, policy{}, false, create(csrs, "", list)},
		{"subject: some other signer", subject, policy{}, false,
			create(csrs, "", csr(certificatesv1.KubeAPIServerClientKubeletSignerName, withRequest(pemWithGroups(t, "system:masters"))))},
		{"subject: invalid request", subject, policy{}, false,
			create(csrs, "", csr(certificatesv1.KubeAPIServerClientSignerName, withRequest([]byte("this is not a CSR"))))},
		{"subject: some other group", subject, policy{}, false,
			create(csrs, "", csr(certificatesv1.KubeAPIServerClientSignerName, withRequest(pemWithGroups(t, "system:admin"))))},
		{"subject: request for system:masters", subject, policy{}, false,
			create(csrs, "", csr(certificatesv1.KubeAPIServerClientSignerName, withRequest(pemWithGroups(t, "system:masters"))))},
		// ClusterTrustBundle attest
		{"ctb: wrong type on create", ctb, allowing("attest"), true, create(bundles, "", &certificatesv1beta1.ClusterTrustBundleList{})},
		{"ctb: wrong type on update", ctb, allowing("attest"), true, update(bundles, "", &certificatesv1beta1.ClusterTrustBundleList{}, nil)},
		{"ctb: reject if looking up permissions fails", ctb, failing("forced error"), true, update(bundles, "", bundle("abc.com/xyz"), nil)},
		{"ctb: allow create without signer name", ctb, allowing("attest", "abc.com/xyz"), true, create(bundles, "", bundle(""))},
		{"ctb: allow update without signer name", ctb, allowing("attest", "abc.com/xyz"), true, update(bundles, "", bundle(""), bundle(""))},
		{"ctb: allow create if authorized for signerName", ctb, allowing("attest", "abc.com/xyz"), true, create(bundles, "", bundle("abc.com/xyz"))},
		{"ctb: allow update if authorized for signerName", ctb, allowing("attest", "abc.com/xyz"), true, update(bundles, "", bundle("abc.com/xyz"), bundle("abc.com/xyz"))},
		{"ctb: allow create with wildcard", ctb, allowing("attest", "abc.com/*"), true, create(bundles, "", bundle("abc.com/xyz"))},
		{"ctb: allow update with wildcard", ctb, allowing("attest", "abc.com/*"), true, update(bundles, "", bundle("abc.com/xyz"), bundle("abc.com/xyz"))},
		{"ctb: deny create without permission", ctb, allowing("attest", "notabc.com/xyz"), true, create(bundles, "", bundle("abc.com/xyz"))},
		{"ctb: deny update without permission", ctb, allowing("attest", "notabc.com/xyz"), true, update(bundles, "", bundle("abc.com/xyz"), nil)},
		{"ctb: always allow no-op update", ctb, failing("broken"), true, update(bundles, "", bundle("panda.com/foo"), bundle("panda.com/foo"))},
		{"ctb: always allow finalizer update", ctb, failing("broken"), true, update(bundles, "",
			bundle("panda.com/foo", func(b *certificatesv1beta1.ClusterTrustBundle) {
				b.OwnerReferences = []metav1.OwnerReference{{APIVersion: "something"}}
			}), bundle("panda.com/foo"))},
	}
}

func TestUpstreamTables(t *testing.T) {
	for _, tc := range upstreamTables(t) {
		t.Run(tc.name, func(t *testing.T) {
			compare(t, tc.plugin, tc.policy, tc.gate, tc.req)
		})
	}
}
