// Package serviceaccount holds a differential test of admitd's
// ServiceAccount admission plugin against upstream's
// (plugin/pkg/admission/serviceaccount of k8s.io/kubernetes v1.37.2, over
// the informer lister and the live client of a fake clientset): upstream's
// own test cases and generated pods go through both and must get the same
// decision, error text and status code, and the same mutated pod (the
// random suffix of a new kube-api-access-* volume masked on both sides). It
// has no non-test code.
package serviceaccount
