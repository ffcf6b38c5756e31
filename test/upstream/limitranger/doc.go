// Package limitranger holds a differential test of admitd's LimitRanger
// admission plugin against upstream's (plugin/pkg/admission/limitranger of
// k8s.io/kubernetes v1.37.2, over an informer lister of a fake clientset,
// given the internal objects kube-apiserver decodes): upstream's own test
// tables and generated pods, claims and LimitRanges go through both, which
// must agree on the decision, the status code and message, and the
// mutated object with its kubernetes.io/limit-ranger annotation. It has no
// non-test code.
package limitranger
