// Package limitpodhardantiaffinitytopology holds a differential test of
// admitd's LimitPodHardAntiAffinityTopology admission plugin against
// upstream's (plugin/pkg/admission/antiaffinity of k8s.io/kubernetes
// v1.37.2, given the internal objects kube-apiserver decodes): upstream's
// test cases and generated pods with required and preferred pod
// (anti-)affinity terms go through both, which must agree on the decision,
// status code and message. It has no non-test code.
package limitpodhardantiaffinitytopology
