package registry

// Expected messages are kube-apiserver 1.37.2's, recorded from the real
// server for the same objects where noted; test/upstream/
// certificatesvalidation compares the strategies over generated objects.

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"reflect"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// testCA is a PEM self-signed CA certificate.
func testCA(t *testing.T, isCA bool) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now(),
		NotAfter: time.Now().Add(time.Hour), IsCA: isCA, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestCertificatesResources(t *testing.T) {
	var names []string
	for _, r := range testCatalogue.Resources() {
		if r.Group == "certificates.k8s.io" {
			names = append(names, r.Resource)
		}
	}
	if want := []string{"certificatesigningrequests", "clustertrustbundles", "podcertificaterequests"}; !reflect.DeepEqual(names, want) {
		t.Errorf("certificates.k8s.io resources = %q, want %q", names, want)
	}
	for _, tc := range []struct {
		resource, kind   string
		namespaced, stat bool
		fields           []string
	}{
		{"clustertrustbundles", "ClusterTrustBundle", false, false, []string{"spec.signerName"}},
		{"podcertificaterequests", "PodCertificateRequest", true, true, []string{"spec.signerName", "spec.podName", "spec.nodeName"}},
	} {
		r, ok := testCatalogue.Lookup(schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: tc.resource})
		if !ok {
			t.Fatalf("Lookup(%s) = false, want served", tc.resource)
		}
		if r.Kind != tc.kind || r.Namespaced != tc.namespaced || r.StatusSubresource != tc.stat || r.ClearStatusOnCreate != tc.stat ||
			r.TracksGeneration || len(r.ShortNames) > 0 || len(r.Categories) > 0 || !reflect.DeepEqual(r.FieldLabels, tc.fields) {
			t.Errorf("%s = %+v; want kind %s namespaced %v status %v, fields %q, no generation, names or categories",
				tc.resource, r, tc.kind, tc.namespaced, tc.stat, tc.fields)
		}
	}
}

func bundle(name, signer, pemData string) *certificatesv1.ClusterTrustBundle {
	return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pemData}}
}

func TestValidateClusterTrustBundle(t *testing.T) {
	ca := testCA(t, true)
	for _, tc := range []struct {
		name string
		b    *certificatesv1.ClusterTrustBundle
		want string
	}{
		{"no signer", bundle("example-bundle", "", ca), ""},
		{"signer", bundle("example.com:foo:bundle1", "example.com/foo", ca), ""},
		// Recorded from kube-apiserver 1.37.2.
		{"bad prefix, no anchor", bundle("x", "example.com/foo", "garbage"),
			`[metadata.name: Invalid value: "x": ClusterTrustBundle for signerName example.com/foo must be named with prefix example.com:foo:, ` +
				`spec.trustBundle: Invalid value: "<value omitted>": at least one trust anchor must be provided]`},
		{"colon without signer", bundle("a:b", "", ca), `metadata.name: Invalid value: "a:b": ClusterTrustBundle without signer name must not have ":" in its name`},
		{"bad signer", bundle("foo:b", "foo", ca), `spec.signerName: Invalid value: "foo": must be a fully qualified domain and path of the form 'example.com/signer-name'`},
		{"one-label domain", bundle("foo:bar:b", "foo/bar", ca), `spec.signerName: Invalid value: "foo": should be a domain with at least two segments separated by dots`},
		{"not a CA, duplicate", bundle("b", "", testCA(t, false)+ca+ca),
			`spec.trustBundle: Invalid value: "<value omitted>": entry 0 does not have the CA bit set`},
		{"duplicate", bundle("b", "", ca+ca), `spec.trustBundle: Invalid value: "<value omitted>": duplicate trust anchor (indices [0 1])`},
		{"block type", bundle("b", "", "-----BEGIN KEY-----\nAAAA\n-----END KEY-----\n"),
			`spec.trustBundle: Invalid value: "<value omitted>": entry 0 has bad block type: KEY`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aggregate(createErrors(t, tc.b)); got != tc.want {
				t.Errorf("create errors =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestClusterTrustBundleUpdate(t *testing.T) {
	old := bundle("example.com:foo:bundle1", "example.com/foo", "garbage")
	r := resourceFor(t, old)
	relabelled := old.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	if errs := PrepareUpdate(r, relabelled, old); len(errs) > 0 {
		t.Errorf("relabel of a bundle stored unparsable: %v, want allowed (the bundle is not parsed again)", errs)
	}
	moved := old.DeepCopy()
	moved.Spec.SignerName = "example.com/baz"
	// Recorded from kube-apiserver 1.37.2.
	want := `[metadata.name: Invalid value: "example.com:foo:bundle1": ClusterTrustBundle for signerName example.com/baz must be named with prefix example.com:baz:, ` +
		`spec.signerName: Invalid value: "example.com/baz": field is immutable]`
	if got := aggregate(PrepareUpdate(r, moved, old)); got != want {
		t.Errorf("signer change =\n%s\nwant\n%s", got, want)
	}
}

// testStubRequest is a DER PKCS#10 request for a new Ed25519 key.
func testStubRequest(t *testing.T) ([]byte, ed25519.PrivateKey) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}
