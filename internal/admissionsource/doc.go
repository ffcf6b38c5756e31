// Package admissionsource is what admission reads of the cluster: the one
// place where compiled-in plugins, webhooks and policies get cluster state.
// It holds the snapshots of webhook configurations and of admission
// policies and bindings (ConfigCache: fed by a storage watch, so a change
// made on any instance sharing the storage reaches this one, and reloaded
// by the server's write observers before a write made here returns), the
// lookups of namespaces, services, endpoint slices and policy params, the
// catalogue's answers about kinds (Schema) and the structured-merge types
// of custom resources.
//
// The lookups read storage at each call rather than a watch-fed cache:
// storage is the one copy every instance shares, so they are never stale,
// and the namespace lookup decodes a namespace again only when its
// revision changed.
//
// It does not serve the API or write anything.
package admissionsource
