// Package namespaceautoprovision holds a differential test of admitd's
// NamespaceAutoProvision admission plugin against upstream's
// (plugin/pkg/admission/namespace/autoprovision of k8s.io/kubernetes
// v1.37.2, over a namespace informer and a fake clientset): generated
// requests (operations, kinds, namespaces that exist, do not, or whose
// creation fails, dry runs) go through both, which must agree on the
// decision, status code and message, and on the namespaces that exist
// afterwards. It has no non-test code.
package namespaceautoprovision
