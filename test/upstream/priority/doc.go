// Package priority holds a differential test of admitd's Priority
// admission plugin against upstream's (plugin/pkg/admission/priority of
// k8s.io/kubernetes v1.37.2, over the informer lister of a fake clientset):
// upstream's own test cases and generated clusters of PriorityClasses with
// generated pods and PriorityClass writes go through both and must get the
// same decision, error text and status code, and the same mutated object.
// It has no non-test code.
package priority
