// Package rbac holds differential tests of internal/auth/rbac against
// upstream's RBAC authorizer, rule resolver, coverage check and bootstrap
// policy (k8s.io/kubernetes v1.37.2). It has no non-test code.
package rbac
