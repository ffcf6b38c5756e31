package registry

import (
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestCSRPreparation(t *testing.T) {
	res, ok := NewCatalogue().Lookup(schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"})
	if !ok {
		t.Fatal("no certificatesigningrequests")
	}
	sent := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		SignerName: "example.com/s", Username: "forged", Groups: []string{"system:masters"}},
		Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("c"),
			Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}}}
	PrepareForCreateBy(res, sent, authenticationv1.UserInfo{Username: "alice", UID: "a-uid", Groups: []string{"devs"},
		Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}})
	PrepareForCreate(res, sent)
	if s := sent.Spec; s.Username != "alice" || s.UID != "a-uid" || len(s.Groups) != 1 || s.Groups[0] != "devs" || s.Extra["k"][0] != "v" {
		t.Errorf("spec after create = %+v, want alice's identity", s)
	}
	if len(sent.Status.Conditions) != 0 || sent.Status.Certificate != nil {
		t.Errorf("status after create = %+v, want empty", sent.Status)
	}

	stored := sent.DeepCopy()
	long := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	stored.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{
		{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, LastTransitionTime: long, LastUpdateTime: long}}

	// approval: only conditions change; a repeated condition keeps its
	// transition time, a new one is stamped
	upd := stored.DeepCopy()
	upd.Spec.SignerName = "example.com/other"
	upd.Status.Certificate = []byte("forged")
	upd.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{
		{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue},
		{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue}}
	out := PrepareForUpdate(res, "approval", upd, stored).(*certificatesv1.CertificateSigningRequest)
	if out.Spec.SignerName != "example.com/s" || out.Status.Certificate != nil {
		t.Errorf("approval changed spec or certificate: %+v", out)
	}
	if c := out.Status.Conditions; len(c) != 2 || !c[0].LastTransitionTime.Equal(&long) || c[0].LastUpdateTime.Equal(&long) || c[1].LastTransitionTime.IsZero() {
		t.Errorf("approval conditions = %+v", c)
	}

	// status: the certificate changes, Approved stays as stored
	upd = stored.DeepCopy()
	upd.Status.Certificate = []byte("cert")
	upd.Status.Conditions[0].Reason = "changed"
	out = PrepareForUpdate(res, "status", upd, stored).(*certificatesv1.CertificateSigningRequest)
	if string(out.Status.Certificate) != "cert" || out.Status.Conditions[0].Reason != "" {
		t.Errorf("status update = %+v, want the certificate and the stored Approved condition", out.Status)
	}

	// main resource: spec and status stay
	upd = stored.DeepCopy()
	upd.Labels = map[string]string{"a": "b"}
	upd.Spec.SignerName = "example.com/other"
	upd.Status.Certificate = []byte("cert")
	out = PrepareForUpdate(res, "", upd, stored).(*certificatesv1.CertificateSigningRequest)
	if out.Spec.SignerName != "example.com/s" || out.Status.Certificate != nil || out.Labels["a"] != "b" {
		t.Errorf("main update = %+v, want only metadata changed", out)
	}
}
