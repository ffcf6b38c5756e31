// Package defaultingressclass holds a differential test of admitd's
// DefaultIngressClass admission plugin against upstream's
// (plugin/pkg/admission/network/defaultingressclass of k8s.io/kubernetes
// v1.37.2, over an informer lister): upstream's own test table and
// generated sets of IngressClasses and Ingresses go through both and must
// get the same decision, error and Ingress. It has no non-test code.
package defaultingressclass
