// Package namespaceexists holds a differential test of admitd's
// NamespaceExists admission plugin against upstream's
// (plugin/pkg/admission/namespace/exists of k8s.io/kubernetes v1.37.2, over
// a namespace informer and a fake clientset): generated requests
// (operations, kinds, namespaces that exist, do not, or cannot be read) go
// through both, which must agree on the decision, status code and message.
// It has no non-test code.
package namespaceexists
