// Package storageobjectinuseprotection holds a differential test of
// admitd's StorageObjectInUseProtection admission plugin against upstream's
// (plugin/pkg/admission/storage/storageobjectinuseprotection of
// k8s.io/kubernetes v1.37.2, default feature gates): upstream's own test
// table and generated volumes, claims and volume attributes classes go
// through both and must leave the same finalizers. It has no non-test code.
package storageobjectinuseprotection
