// Package certificates holds differential tests of admitd's certificate
// admission plugins (CertificateApproval, CertificateSigning,
// CertificateSubjectRestriction, ClusterTrustBundleAttest) against
// upstream's (plugin/pkg/admission/certificates/... of k8s.io/kubernetes
// v1.37.2): upstream's own test tables and generated requests go through
// both, given the same authorizer decisions, and must get the same
// decision, error text, status code and the same authorization checks in
// the same order. It has no non-test code.
package certificates
