package controllers

import (
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// The garbage collector's view of storage: every object as a node keyed by
// uid, and for every uid the objects that name it as an owner (whether or
// not it exists), as upstream's GraphBuilder keeps. Changes to the graph
// decide what work to queue.

// node is one stored object.
type node struct {
	key, group, resource string
	namespace, name      string
	uid                  types.UID
	owners               []metav1.OwnerReference
	deleting             bool // deletionTimestamp is set
	orphan, foreground   bool // has the orphan / foregroundDeletion finalizer
}

// deletingDependents: the object waits for its dependents (foreground).
func (n *node) deletingDependents() bool { return n.deleting && n.foreground }

func (n *node) ownerRef(owner types.UID) (metav1.OwnerReference, bool) {
	for _, r := range n.owners {
		if r.UID == owner {
			return r, true
		}
	}
	return metav1.OwnerReference{}, false
}

// work is one queued task: try to delete the object (or, for an owner in
// foreground deletion, check its dependents), or orphan its dependents.
// invalidOwner, when set, is the uid of an owner the object's reference
// names in its own namespace but that is stored in another: the collector
// reports it (an OwnerRefInvalidNamespace event) before it tries the
// delete.
type work struct {
	uid          types.UID
	orphan       bool
	invalidOwner types.UID
}

type graph struct {
	mu         sync.Mutex
	nodes      map[types.UID]*node
	byKey      map[string]types.UID
	dependents map[types.UID]map[types.UID]bool // owner uid → dependent uids
	// peak is the most nodes held since the maps were made: a Go map keeps
	// the room of its largest size, so once a mass deletion (a namespace
	// of 10,000 objects) leaves under a quarter of peak, remove remakes
	// the maps at their new size.
	peak int
	// kindOf is the kind stored under a group and resource, when known
	// (nil: kinds are not compared).
	kindOf func(group, resource string) (string, bool)
}

// shrinkFloor is the peak below which the maps are never remade.
const shrinkFloor = 1024

func newGraph() *graph {
	return &graph{nodes: map[types.UID]*node{}, byKey: map[string]types.UID{}, dependents: map[types.UID]map[types.UID]bool{}}
}

func nodeFrom(kv storage.KeyValue) *node {
	group, resource, ok := layout.KeyResource(kv.Key)
	if !ok {
		return nil
	}
	s, err := decodeStored(kv.Value)
	if err != nil || s.Metadata.UID == "" {
		return nil
	}
	m := s.Metadata
	return &node{key: kv.Key, group: group, resource: resource, namespace: m.Namespace, name: m.Name, uid: m.UID,
		owners: m.OwnerReferences, deleting: m.DeletionTimestamp != nil,
		orphan:     slices.Contains(m.Finalizers, metav1.FinalizerOrphanDependents),
		foreground: slices.Contains(m.Finalizers, metav1.FinalizerDeleteDependents)}
}

// reset replaces the graph with items and returns the work they call for.
func (g *graph) reset(items []storage.KeyValue) []work {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nodes, g.byKey, g.dependents = map[types.UID]*node{}, map[string]types.UID{}, map[types.UID]map[types.UID]bool{}
	g.peak = 0
	var added []*node
	for _, kv := range items {
		if n := nodeFrom(kv); n != nil {
			g.insert(n)
			added = append(added, n)
		}
	}
	var out []work
	for _, n := range added {
		out = append(out, g.workForNew(n)...)
	}
	return out
}

// apply updates the graph with one change and returns the work it calls for.
func (g *graph) apply(ev storage.Event) []work {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ev.Type == storage.EventDelete {
		uid, ok := g.byKey[ev.KV.Key]
		if !ok {
			return nil
		}
		return g.remove(g.nodes[uid])
	}
	n := nodeFrom(ev.KV)
	if n == nil {
		return nil
	}
	if olduid, ok := g.byKey[n.key]; ok && olduid != n.uid {
		g.remove(g.nodes[olduid])
	}
	old := g.nodes[n.uid]
	if old == nil {
		g.insert(n)
		return g.workForNew(n)
	}
	return g.update(old, n)
}

func (g *graph) insert(n *node) {
	g.nodes[n.uid] = n
	g.byKey[n.key] = n.uid
	g.peak = max(g.peak, len(g.nodes))
	for _, o := range n.owners {
		g.addDependent(o.UID, n.uid)
	}
}

func (g *graph) addDependent(owner, dep types.UID) {
	set := g.dependents[owner]
	if set == nil {
		set = map[types.UID]bool{}
		g.dependents[owner] = set
	}
	set[dep] = true
}

func (g *graph) removeDependent(owner, dep types.UID) {
	if set := g.dependents[owner]; set != nil {
		delete(set, dep)
		if len(set) == 0 {
			delete(g.dependents, owner)
		}
	}
}

// workForNew: a new object whose owner is not (or no longer) stored, or
// is stored under other coordinates, may be garbage; an owner in
// foreground deletion rechecks its dependents; dependents that name the
// new object's uid under other coordinates may be garbage; and the object
// itself may already wait for its dependents.
func (g *graph) workForNew(n *node) []work {
	out := g.workForOwners(n, n.owners)
	for _, o := range n.owners {
		if owner, ok := g.nodes[o.UID]; ok && owner.deletingDependents() {
			out = appendOnce(out, work{uid: owner.uid})
		}
	}
	for dep := range g.dependents[n.uid] {
		if d := g.nodes[dep]; d != nil {
			ref, _ := d.ownerRef(n.uid)
			if w, ok := g.mismatch(n, ref, d); ok {
				out = appendOnce(out, w)
			}
		}
	}
	return append(out, g.transitions(nil, n)...)
}

// workForOwners is the work refs (new references of n) call for: n is
// queued once if an owner is not stored, or if one is stored under
// coordinates its reference does not match, the first in another
// namespace reported, as upstream's GraphBuilder does.
func (g *graph) workForOwners(n *node, refs []metav1.OwnerReference) []work {
	var out []work
	checked := false
	for _, o := range refs {
		owner, ok := g.nodes[o.UID]
		if !ok {
			out = appendOnce(out, work{uid: n.uid})
			continue
		}
		if checked {
			continue
		}
		if w, bad := g.mismatch(owner, o, n); bad {
			out, checked = appendOnce(out, w), true
		}
	}
	return out
}

// mismatch says whether dep's reference ref names owner (stored, with the
// reference's uid) under other coordinates: a namespaced owner in another
// namespace (reported), another name, another API group or another kind.
// The collector then checks dep's owners as the API server has them, by
// the references' coordinates, in dep's namespace (an owner found there
// with the reference's uid, at another version say, keeps dep).
func (g *graph) mismatch(owner *node, ref metav1.OwnerReference, dep *node) (work, bool) {
	switch {
	case owner.namespace != "" && owner.namespace != dep.namespace:
		return work{uid: dep.uid, invalidOwner: owner.uid}, true
	case owner.name != ref.Name || !g.sameKind(owner, ref):
		return work{uid: dep.uid}, true
	}
	return work{}, false
}

// sameKind says whether ref's API group and kind may be owner's: a
// malformed apiVersion, or a kind the graph cannot tell, is left to the
// collector's check when something else queues dep.
func (g *graph) sameKind(owner *node, ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return true
	}
	if gv.Group != owner.group {
		return false
	}
	if g.kindOf == nil {
		return true
	}
	kind, known := g.kindOf(owner.group, owner.resource)
	return !known || kind == ref.Kind
}

// update replaces old with n.
func (g *graph) update(old, n *node) []work {
	var out []work
	for _, o := range old.owners {
		ref, still := n.ownerRef(o.UID)
		if still && blocks(ref) == blocks(o) {
			continue
		}
		if !still {
			g.removeDependent(o.UID, old.uid)
		}
		if owner := g.nodes[o.UID]; owner != nil && owner.deletingDependents() {
			out = appendOnce(out, work{uid: owner.uid})
		}
	}
	g.nodes[n.uid] = n
	g.byKey[n.key] = n.uid
	var added []metav1.OwnerReference
	for _, o := range n.owners {
		if _, had := old.ownerRef(o.UID); !had {
			g.addDependent(o.UID, n.uid)
			added = append(added, o)
		}
	}
	for _, w := range g.workForOwners(n, added) {
		out = appendOnce(out, w)
	}
	return append(out, g.transitions(old, n)...)
}

// transitions: an object that starts waiting for its dependents to be
// orphaned or deleted.
func (g *graph) transitions(old, n *node) []work {
	var out []work
	if n.deleting && n.orphan && (old == nil || !old.deleting || !old.orphan) {
		out = append(out, work{uid: n.uid, orphan: true})
	}
	if n.deletingDependents() && (old == nil || !old.deletingDependents()) {
		for dep := range g.dependents[n.uid] {
			out = append(out, work{uid: dep})
		}
		out = append(out, work{uid: n.uid})
	}
	return out
}

// remove drops a deleted object: its dependents may now be garbage, and an
// owner waiting for it may be done.
func (g *graph) remove(n *node) []work {
	if n == nil {
		return nil
	}
	delete(g.nodes, n.uid)
	delete(g.byKey, n.key)
	defer g.shrinkIfSparse()
	var out []work
	for dep := range g.dependents[n.uid] {
		out = append(out, work{uid: dep})
	}
	for _, o := range n.owners {
		g.removeDependent(o.UID, n.uid)
		if owner := g.nodes[o.UID]; owner != nil && owner.deletingDependents() {
			out = appendOnce(out, work{uid: owner.uid})
		}
	}
	return out
}

// shrinkIfSparse remakes the maps at their size when they hold under a
// quarter of their peak: each remake copies at most a third of the removes
// since the last, so it costs O(1) a remove amortized.
func (g *graph) shrinkIfSparse() {
	if g.peak < shrinkFloor || len(g.nodes) >= g.peak/4 {
		return
	}
	g.nodes, g.byKey, g.dependents = remade(g.nodes), remade(g.byKey), remade(g.dependents)
	g.peak = len(g.nodes)
}

// remade returns a copy of m in a map made for its present size.
func remade[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func blocks(r metav1.OwnerReference) bool {
	return r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion
}

func appendOnce(list []work, w work) []work {
	if slices.Contains(list, w) {
		return list
	}
	return append(list, w)
}

// get returns a copy of the node of uid.
func (g *graph) get(uid types.UID) (node, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n, ok := g.nodes[uid]
	if !ok {
		return node{}, false
	}
	return *n, true
}

// dependentsOf returns copies of the stored dependents of uid.
func (g *graph) dependentsOf(uid types.UID) []node {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []node
	for dep := range g.dependents[uid] {
		if n, ok := g.nodes[dep]; ok {
			out = append(out, *n)
		}
	}
	return out
}
