package certificatesubjectrestriction

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
)

func request(t *testing.T, orgs ...string) []byte {
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

func csr(signer string, req []byte) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "req"},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer, Request: req}}
}

var csrResource = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}

const prefix = `certificatesigningrequests.certificates.k8s.io "req" is forbidden: `

func TestValidate(t *testing.T) {
	client := certificatesv1.KubeAPIServerClientSignerName
	notPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")})
	cases := []struct {
		name        string
		resource    schema.GroupVersionResource
		subresource string
		obj         runtime.Object
		wantErr     string
	}{
		{"masters for kube-apiserver-client", csrResource, "", csr(client, request(t, "system:masters")),
			prefix + "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"},
		{"masters among other groups", csrResource, "", csr(client, request(t, "devs", "system:masters")),
			prefix + "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"},
		{"other groups", csrResource, "", csr(client, request(t, "devs", "system:nodes")), ""},
		{"masters for another signer", csrResource, "", csr("example.com/x", request(t, "system:masters")), ""},
		{"masters for kubelet client signer", csrResource, "", csr(certificatesv1.KubeAPIServerClientKubeletSignerName, request(t, "system:masters")), ""},
		{"unparsable request", csrResource, "", csr(client, []byte("garbage")), prefix + "failed to parse CSR: PEM block type must be CERTIFICATE REQUEST"},
		{"wrong PEM block", csrResource, "", csr(client, notPEM), prefix + "failed to parse CSR: PEM block type must be CERTIFICATE REQUEST"},
		{"bad DER", csrResource, "", csr(client, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte("x")})),
			prefix + "failed to parse CSR: asn1: syntax error: truncated tag or length"},
		{"subresource is not checked", csrResource, "status", csr(client, request(t, "system:masters")), ""},
		{"other resource is not checked", schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "", &corev1.Pod{}, ""},
		{"wrong type", csrResource, "", &corev1.Pod{}, prefix[:len(prefix)-len(`"req" is forbidden: `)] + `"Unknown" is forbidden: expected type CertificateSigningRequest, got: *core.Pod`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Resource: tc.resource, Subresource: tc.subresource, Operation: admission.Create,
				Object: tc.obj, Record: &admission.Record{}}
			err := (&Plugin{}).Validate(context.Background(), a)
			if got := errString(err); got != tc.wantErr {
				t.Fatalf("Validate = %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func TestHandles(t *testing.T) {
	for _, op := range []admission.Operation{admission.Create, admission.Update, admission.Delete, admission.Connect} {
		if got, want := (&Plugin{}).Handles(op), op == admission.Create; got != want {
			t.Errorf("Handles(%s) = %v, want %v", op, got, want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
