// Package defaultstorageclass holds a differential test of admitd's
// DefaultStorageClass admission plugin against upstream's
// (plugin/pkg/admission/storage/storageclass/setdefault of k8s.io/kubernetes
// v1.37.2, over an informer lister): upstream's own test table and generated
// sets of StorageClasses and claims go through both and must get the same
// decision and the same claim. It has no non-test code.
package defaultstorageclass
