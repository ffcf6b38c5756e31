// Package podsecurity holds a differential test of admitd's PodSecurity
// admission plugin against kube-apiserver's
// (plugin/pkg/admission/security/podsecurity of k8s.io/kubernetes v1.37.2,
// over informer listers and a fake clientset, given the internal objects
// kube-apiserver decodes): upstream's own fixture pods and generated pods,
// workloads and namespace writes go through both and must get the same
// decision, status, warnings and audit annotations. It has no non-test
// code.
package podsecurity
