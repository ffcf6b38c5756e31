// Package alwaysdeny holds a differential test of admitd's deprecated
// AlwaysDeny and AlwaysAdmit admission plugins against upstream's
// (plugin/pkg/admission/deny and admit of k8s.io/kubernetes v1.37.2):
// generated requests (every operation, resources of several groups,
// subresources, names, generated names and no name) go through both
// phases of both, which must agree on the decision, status code, message
// and details. It has no non-test code.
package alwaysdeny
