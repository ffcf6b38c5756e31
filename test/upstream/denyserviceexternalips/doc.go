// Package denyserviceexternalips holds a differential test of admitd's
// DenyServiceExternalIPs admission plugin against upstream's
// (plugin/pkg/admission/network/denyserviceexternalips of k8s.io/kubernetes
// v1.37.2): upstream's own test table and generated Service creates and
// updates go through both and must get the same decision and error. It has
// no non-test code.
package denyserviceexternalips
