// Package layout owns how objects are laid out in storage: the key of an
// object (/registry/<group>/<resource>/[<namespace>/]<name>, core as
// "core") and the JSON codec of stored values (storage version, no
// resourceVersion: the revision stamps it on read). kube-apiserver lays out
// custom resources the same way, but keys built-in resources by resource
// name alone (/registry/pods/<namespace>/<name>, a few renamed, e.g.
// services/specs: DefaultStorageFactory.ResourcePrefix in
// k8s.io/apiserver/pkg/server/storage/storage_factory.go and
// SpecialDefaultResourcePrefixes in
// k8s.io/kubernetes/pkg/kubeapiserver/default_storage_factory_builder.go). The API server, the admission sources and the controllers read
// and write keys only through it.
//
// It is not a store or a cache: it only names and encodes.
package layout

import (
	"strings"

	"github.com/admitd/admitd/internal/registry"
)

// Root is the prefix of every key.
const Root = "/registry/"

// Key is where an object of res lives.
func Key(res *registry.Resource, namespace, name string) string {
	if !res.Namespaced {
		return ResourcePrefix(res) + name
	}
	return ResourcePrefix(res) + namespace + "/" + name
}

// ResourcePrefix is the key prefix of every object of res (all versions of
// a resource share it, and so does a resource stored as another group's:
// events.k8s.io's events are core events).
func ResourcePrefix(res *registry.Resource) string {
	return GroupPrefix(res.StorageGroupVersion().Group) + res.Resource + "/"
}

// GroupPrefix is the key prefix of every resource of group ("" for core).
func GroupPrefix(group string) string {
	if group == "" {
		group = "core"
	}
	return Root + group + "/"
}

// ListPrefix is the key prefix of the objects of res in namespace ("" for
// all namespaces).
func ListPrefix(res *registry.Resource, namespace string) string {
	if namespace == "" || !res.Namespaced {
		return ResourcePrefix(res)
	}
	return ResourcePrefix(res) + namespace + "/"
}

// KeyResource splits a key into its group ("" for core) and resource; ok
// is false for a key outside the layout.
func KeyResource(key string) (group, resource string, ok bool) {
	rest, found := strings.CutPrefix(key, Root)
	if !found {
		return "", "", false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 {
		return "", "", false
	}
	if parts[0] == "core" {
		parts[0] = ""
	}
	return parts[0], parts[1], true
}
