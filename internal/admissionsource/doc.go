// Package admissionsource is what admission reads of the cluster: the one
// place where compiled-in plugins, webhooks and policies get cluster state.
// It holds the snapshots of webhook configurations and of admission
// policies and bindings (ConfigCache), the lookups of namespaces, secrets,
// services, endpoint slices and policy params over watch-fed object caches
// (Cache, Sources), the catalogue's answers about kinds (Schema) and the
// structured-merge types of custom resources.
//
// Every cache follows storage, the one copy that instances sharing it (an
// etcd) have in common, in two ways. A storage watch brings every change,
// whichever instance made it: a Cache lists its resource at a revision R,
// watches from R, watches again from its last revision when the watch
// ends, and lists again when that revision was compacted. The server's
// write observers (internal/server) bring the writes made on this
// instance before they return, so a write is read back by the next
// request on the same instance (read-your-writes); on another instance it
// is seen once the watch delivers it. Each change is applied at its
// storage revision (the object's resourceVersion): an older one never
// replaces a newer, a delete leaves a tombstone until the watch has passed
// it, and the watch's copy of an observed write is skipped, so an object
// is decoded once per change.
//
// Caches are created on first use (Sources.For, one per resource version;
// ListerFor wraps one in a typed Lister: the kinds compiled-in plugins
// read are declared in sources.go, params of any kind, custom resources
// included, get theirs at their first lookup)
// and run from Sources.Start, which the server calls once storage is
// bootstrapped. Until a cache has listed once it reads storage directly
// rather than waiting: it is never wrong, only slower, and a lookup never
// blocks on a sync. The lookups made with NewNamespaceLookup and the other
// constructors over a store are never started and so always read storage,
// for tests and tools without a server.
//
// What a cache returns is shared and must not be modified.
//
// It does not serve the API or write anything.
package admissionsource
