// Package noderestriction holds a differential test of admitd's
// NodeRestriction admission plugin against upstream's
// (plugin/pkg/admission/noderestriction of k8s.io/kubernetes v1.37.2, with
// default feature gates, over informer listers of a fake clientset): the
// same generated requests go through both and must get the same decision,
// error text and status code. It has no non-test code.
package noderestriction
