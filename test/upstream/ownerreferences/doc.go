// Package ownerreferences holds a differential test of admitd's
// OwnerReferencesPermissionEnforcement admission plugin against upstream's
// (plugin/pkg/admission/gc of k8s.io/kubernetes v1.37.2): upstream's own
// test tables and generated requests go through both, given the same
// authorizer decisions, and must get the same decision, error text, status
// code and the same authorization checks in the same order. Owner kinds are
// mapped by client-go's discovery REST mapper over one fake discovery for
// both, and, separately, by admitd's own schema (the server's catalogue)
// against upstream's mapper over kube-apiserver's discovery of the same
// kinds. It has no non-test code.
package ownerreferences
