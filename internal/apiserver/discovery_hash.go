package apiserver

import (
	"crypto/sha256"
	"encoding/base64"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
)

// storageVersionHash is the storageVersionHash legacy discovery gives a
// stored resource: the first 8 bytes of the SHA-256 of
// "<group>/<version>/<kind>" of the version kube-apiserver stores it in,
// base64, as upstream computes it. Clients (the storage version migrator)
// compare it to notice a resource's storage version changing. Resources
// without storage (reviews, bindings, component statuses) have none.
func storageVersionHash(res *registry.Resource) string {
	if !slices.Contains(res.Verbs, "get") || res.GroupResource() == componentStatuses {
		return ""
	}
	gv := res.StorageGroupVersion()
	if v, ok := upstreamStorageVersions[gv.WithResource(res.Resource).GroupResource()]; ok {
		gv.Version = v
	}
	sum := sha256.Sum256([]byte(gv.Group + "/" + gv.Version + "/" + res.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

var componentStatuses = schema.GroupResource{Resource: "componentstatuses"}

// upstreamStorageVersions are the resources kube-apiserver 1.37.2 stores
// in an older version than the one admitd stores them in (v1): the
// version before a graduation is kept for a release, so that a downgrade
// can read the data; custom resource definitions have stayed in v1beta1.
var upstreamStorageVersions = map[schema.GroupResource]string{
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}:   "v1beta1",
	{Group: "certificates.k8s.io", Resource: "clustertrustbundles"}:          "v1beta1",
	{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}:       "v1beta1",
	{Group: "resource.k8s.io", Resource: "devicetaintrules"}:                 "v1beta2",
	{Group: "storagemigration.k8s.io", Resource: "storageversionmigrations"}: "v1beta1",
}
