package csrapproving

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/admitd/admitd/internal/registry"
)

func requestPEM(t *testing.T, subject pkix.Name, dns ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dns}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// handle approves a kubelet client request whose requestor a review
// allows (selfnodeclient for a node's own, else nodeclient), retries one
// not allowed, and leaves other kinds and decided ones alone.
func TestHandle(t *testing.T) {
	node := pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	kubelet := requestPEM(t, node)
	for _, tc := range []struct {
		name, user, signer string
		request            []byte
		allow              string // the subresource the reviews allow
		decided            bool
		reviews            string
		approvedWith       string
		notAllowed         bool
	}{
		{name: "self", user: "system:node:n1", signer: KubeletClient, request: kubelet, allow: "selfnodeclient", reviews: "selfnodeclient",
			approvedWith: "Auto approving self kubelet client certificate after SubjectAccessReview."},
		{name: "bootstrap", user: "system:bootstrap:abc", signer: KubeletClient, request: kubelet, allow: "nodeclient", reviews: "nodeclient",
			approvedWith: "Auto approving kubelet client certificate after SubjectAccessReview."},
		{name: "self, only nodeclient allowed", user: "system:node:n1", signer: KubeletClient, request: kubelet, allow: "nodeclient", reviews: "selfnodeclient,nodeclient",
			approvedWith: "Auto approving kubelet client certificate after SubjectAccessReview."},
		{name: "not allowed", user: "mallory", signer: KubeletClient, request: kubelet, reviews: "nodeclient", notAllowed: true},
		{name: "other signer", user: "system:node:n1", signer: "kubernetes.io/kube-apiserver-client", request: kubelet, allow: "nodeclient"},
		{name: "not a kubelet's", user: "alice", signer: KubeletClient, request: requestPEM(t, pkix.Name{CommonName: "alice"}), allow: "nodeclient"},
		{name: "decided", user: "system:node:n1", signer: KubeletClient, request: kubelet, allow: "nodeclient", decided: true},
	} {
		client := fake.NewClientset()
		var reviews []string
		client.PrependReactor("create", "subjectaccessreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
			sar := a.(clienttesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
			ra := sar.Spec.ResourceAttributes
			reviews = append(reviews, ra.Subresource)
			if sar.Spec.User != tc.user || ra.Resource != "certificatesigningrequests" || ra.Verb != "create" || ra.Group != "certificates.k8s.io" {
				return true, nil, errors.New("unexpected review")
			}
			sar.Status.Allowed = ra.Subresource == tc.allow
			return true, sar, nil
		})
		c, err := New(Config{Catalogue: registry.NewCatalogue(), Client: client})
		if err != nil {
			t.Fatal(err)
		}
		csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: tc.name},
			Spec: certificatesv1.CertificateSigningRequestSpec{Username: tc.user, SignerName: tc.signer, Request: tc.request, Usages: usages}}
		if tc.decided {
			csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: "True"}}
		}
		if err := client.Tracker().Add(csr); err != nil {
			t.Fatal(err)
		}
		err = c.handle(t.Context(), csr)
		if got := strings.Join(reviews, ","); got != tc.reviews {
			t.Errorf("%s: reviews %q, want %q", tc.name, got, tc.reviews)
		}
		if errors.Is(err, errNotAllowed) != tc.notAllowed || (err != nil && !tc.notAllowed) {
			t.Errorf("%s: handle = %v, want not allowed %t", tc.name, err, tc.notAllowed)
		}
		var approved *certificatesv1.CertificateSigningRequest
		for _, a := range client.Actions() {
			if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "approval" {
				approved = u.GetObject().(*certificatesv1.CertificateSigningRequest)
			}
		}
		switch {
		case tc.approvedWith == "" && approved != nil:
			t.Errorf("%s: approved, want not", tc.name)
		case tc.approvedWith != "" && approved == nil:
			t.Errorf("%s: not approved", tc.name)
		case approved != nil:
			cond := approved.Status.Conditions[len(approved.Status.Conditions)-1]
			if cond.Type != certificatesv1.CertificateApproved || cond.Status != "True" || cond.Reason != "AutoApproved" || cond.Message != tc.approvedWith {
				t.Errorf("%s: condition %+v, want Approved/AutoApproved %q", tc.name, cond, tc.approvedWith)
			}
			if len(csr.Status.Conditions) != 0 {
				t.Errorf("%s: handle changed the cached object", tc.name)
			}
		}
	}
}

const KubeletClient = certificatesv1.KubeAPIServerClientKubeletSignerName
