package printers

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The tables of ClusterTrustBundles and PodCertificateRequests, as
// upstream's printClusterTrustBundle and printPodCertificateRequest
// (neither has an Age column; the user annotations column is not marked
// wide, so kubectl always shows it).

var pcrSpecDoc = certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()

var clusterTrustBundlePrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("SignerName", certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]),
}, func(b *certificatesv1.ClusterTrustBundle, _ time.Time) []any {
	return []any{b.Name, orNone(b.Spec.SignerName)}
})

var podCertificateRequestPrinter = kind([]metav1.TableColumnDefinition{
	nameColumn,
	str("PodName", pcrSpecDoc["podName"]),
	str("ServiceAccountName", pcrSpecDoc["serviceAccountName"]),
	str("NodeName", pcrSpecDoc["nodeName"]),
	str("SignerName", pcrSpecDoc["signerName"]),
	str("State", "Is the request Pending, Issued, Denied, or Failed?"),
	str("UnverifiedUserAnnotations", pcrSpecDoc["unverifiedUserAnnotations"]),
}, func(r *certificatesv1.PodCertificateRequest, _ time.Time) []any {
	s := &r.Spec
	return []any{r.Name, s.PodName, s.ServiceAccountName, string(s.NodeName), s.SignerName, pcrPrintedState(r),
		labels.FormatLabels(s.UnverifiedUserAnnotations)}
})

// pcrPrintedState is the last terminal condition's type, whatever its
// status, else Pending.
func pcrPrintedState(r *certificatesv1.PodCertificateRequest) string {
	state := "Pending"
	for _, c := range r.Status.Conditions {
		switch c.Type {
		case "Issued", "Denied", "Failed":
			state = c.Type
		}
	}
	return state
}
