// Package node holds differential tests of internal/auth/node against
// upstream's Node authorizer (plugin/pkg/auth/authorizer/node of
// k8s.io/kubernetes v1.37.2, default feature gates), its graph populator and
// bootstrappolicy.NodeRules. It has no non-test code.
package node
