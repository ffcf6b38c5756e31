package registry

// GCPolicy is what deleting an object does to its dependents when the
// request names no propagation policy: upstream's
// rest.GarbageCollectionPolicy of the kind's strategy.
type GCPolicy string

// The policies of upstream's strategies.
const (
	// DeleteDependents (the zero value) deletes dependents in the
	// background, after the owner.
	DeleteDependents GCPolicy = ""
	// OrphanDependents keeps dependents: the owner gets the "orphan"
	// finalizer and the garbage collector removes their owner references.
	OrphanDependents GCPolicy = "OrphanDependents"
	// GCUnsupported: deletes never add garbage-collection finalizers.
	GCUnsupported GCPolicy = "Unsupported"
)
