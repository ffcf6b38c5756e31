// Package persistentvolumeclaimresize holds a differential test of admitd's
// PersistentVolumeClaimResize admission plugin against upstream's
// (plugin/pkg/admission/storage/persistentvolume/resize of k8s.io/kubernetes
// v1.37.2, over an informer lister): upstream's own test table and
// generated claim updates go through both and must get the same decision
// and error. It has no non-test code.
package persistentvolumeclaimresize
