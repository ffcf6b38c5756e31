// Package alwayspullimages holds a differential test of admitd's
// AlwaysPullImages admission plugin against upstream's
// (plugin/pkg/admission/alwayspullimages of k8s.io/kubernetes v1.37.2,
// given the internal objects kube-apiserver decodes): upstream's test cases
// and generated pods, pod updates, subresources and other resources go
// through both, which must agree on the error of each phase (text and
// status) and on the mutated pod. It has no non-test code.
package alwayspullimages
