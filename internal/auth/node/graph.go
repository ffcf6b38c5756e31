package node

import "sync"

// kind is the type of an object in the graph.
type kind uint8

const (
	kindSecret kind = iota
	kindConfigMap
	kindPVC
	kindPV
	kindResourceClaim
	kindServiceAccount
	kindPod
	kindVolumeAttachment
	kindResourceSlice
	kindPodCertificateRequest
)

// ref names an object of the graph. Cluster-scoped objects have an empty
// namespace.
type ref struct {
	kind      kind
	namespace string
	name      string
}

// podEntry is what the graph keeps of a pod bound to a node: the node and
// the objects the pod gives that node access to, each once.
type podEntry struct {
	node string
	refs []ref
}

// pvEntry is what the graph keeps of a persistent volume with a claimRef:
// the claim, and the secrets the kubelet needs to mount the volume.
type pvEntry struct {
	claim   ref
	secrets []ref
}

// Graph relates nodes to the objects they may read: pods bound to a node,
// the objects those pods reference, the persistent volumes bound to their
// claims and the secrets of those volumes, and the volume attachments,
// resource slices and pod certificate requests that name a node. It is safe
// for concurrent use; the zero value is not usable, call NewGraph.
//
// Upstream keeps a general directed graph searched depth-first, with an
// index on vertices of many edges. This one keeps, per node, a reference
// count of every object its pods use, so a decision is a few map lookups
// whatever the number of pods on other nodes (a secret named by persistent
// volumes also looks at each of those volumes).
type Graph struct {
	metrics *Metrics
	mu      sync.RWMutex
	// pods are the pods bound to a node, by kindPod ref.
	pods map[ref]podEntry
	// uses counts, per node, the pods on it that reference each object.
	uses map[string]map[ref]int
	// pvs are the persistent volumes with a claimRef, by name.
	pvs map[string]pvEntry
	// pvsBySecret lists the volumes that name each secret.
	pvsBySecret map[ref]map[string]struct{}
	// bound holds the node named by each volume attachment, resource slice
	// and pod certificate request.
	bound map[ref]string
}

// NewGraph returns an empty graph that records its changes in m (nil
// records nothing).
func NewGraph(m *Metrics) *Graph {
	return &Graph{
		metrics:     m,
		pods:        map[ref]podEntry{},
		uses:        map[string]map[ref]int{},
		pvs:         map[string]pvEntry{},
		pvsBySecret: map[ref]map[string]struct{}{},
		bound:       map[ref]string{},
	}
}

// reachable reports whether node may reach the object r.
func (g *Graph) reachable(node string, r ref) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	switch r.kind {
	case kindPod:
		p, ok := g.pods[r]
		return ok && p.node == node
	case kindPV:
		// Volumes are cluster-scoped: a request with a namespace names none.
		return r.namespace == "" && g.pvReachableLocked(node, r.name)
	case kindVolumeAttachment, kindResourceSlice, kindPodCertificateRequest:
		n, ok := g.bound[r]
		return ok && n == node
	}
	if g.uses[node][r] > 0 {
		return true
	}
	if r.kind == kindSecret {
		for pv := range g.pvsBySecret[r] {
			if g.pvReachableLocked(node, pv) {
				return true
			}
		}
	}
	return false
}

// pvReachableLocked reports whether a pod on node uses the claim the volume
// named pv is bound to.
func (g *Graph) pvReachableLocked(node, pv string) bool {
	e, ok := g.pvs[pv]
	return ok && g.uses[node][e.claim] > 0
}

// setPodLocked replaces what the graph holds of pod key.
func (g *Graph) setPodLocked(key ref, e podEntry) {
	g.removePodLocked(key)
	g.pods[key] = e
	if len(e.refs) == 0 {
		return
	}
	counts := g.uses[e.node]
	if counts == nil {
		counts = map[ref]int{}
		g.uses[e.node] = counts
	}
	for _, r := range e.refs {
		counts[r]++
	}
}

// removePodLocked forgets pod key and its references.
func (g *Graph) removePodLocked(key ref) {
	old, ok := g.pods[key]
	if !ok {
		return
	}
	delete(g.pods, key)
	counts := g.uses[old.node]
	for _, r := range old.refs {
		if counts[r] <= 1 {
			delete(counts, r)
		} else {
			counts[r]--
		}
	}
	if len(counts) == 0 {
		delete(g.uses, old.node)
	}
}
