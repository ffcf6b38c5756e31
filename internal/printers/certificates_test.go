package printers

import (
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterTrustBundleTable: the signer name, "<none>" without one, and
// no Age column, as kube-apiserver 1.37.2 prints.
func TestClusterTrustBundleTable(t *testing.T) {
	res := lookup(t, "certificates.k8s.io", "v1", "clustertrustbundles")
	checkKind(t, res, []string{"Name", "SignerName"}, []cellCase{
		{name: "no signer", obj: &certificatesv1.ClusterTrustBundle{ObjectMeta: clusterMeta("example-bundle")},
			cells: []any{"example-bundle", "<none>"}},
		{name: "signer", obj: &certificatesv1.ClusterTrustBundle{ObjectMeta: clusterMeta("example.com:foo:b"),
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/foo"}}, cells: []any{"example.com:foo:b", "example.com/foo"}},
	})
}

func TestPodCertificateRequestTable(t *testing.T) {
	res := lookup(t, "certificates.k8s.io", "v1", "podcertificaterequests")
	spec := certificatesv1.PodCertificateRequestSpec{PodName: "pod-1", ServiceAccountName: "default", NodeName: "node-1",
		SignerName: "example.com/foo", UnverifiedUserAnnotations: map[string]string{"example.com/b": "2", "example.com/a": "1"}}
	denied := certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{{Type: "Denied", Status: "True"}}}
	checkKind(t, res, []string{"Name", "PodName", "ServiceAccountName", "NodeName", "SignerName", "State", "UnverifiedUserAnnotations"}, []cellCase{
		{name: "pending", obj: &certificatesv1.PodCertificateRequest{ObjectMeta: objMeta("pcr-1"), Spec: spec},
			cells: []any{"pcr-1", "pod-1", "default", "node-1", "example.com/foo", "Pending", "example.com/a=1,example.com/b=2"}},
		{name: "denied", obj: &certificatesv1.PodCertificateRequest{ObjectMeta: objMeta("pcr-2"), Status: denied},
			cells: []any{"pcr-2", "", "", "", "", "Denied", "<none>"}},
	})
}
