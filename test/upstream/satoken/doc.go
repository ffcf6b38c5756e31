// Package satoken holds differential tests of internal/serviceaccount
// against upstream's service-account tokens (pkg/serviceaccount of
// k8s.io/kubernetes v1.37.2): tokens signed by each side with RSA and ECDSA
// P-256, P-384 and P-521 keys are verified by the other, and the OpenID
// discovery document and key set of the same keys are compared. It has no
// non-test code.
package satoken
