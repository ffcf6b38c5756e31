package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// GarbageCollector is upstream's garbage collector
// (pkg/controller/garbagecollector): an object all of whose owners are gone
// is deleted (with the policy its own finalizers ask for); an owner deleted
// with propagationPolicy Orphan has its dependents' references to it removed
// and then its "orphan" finalizer; an owner deleted in the Foreground waits,
// with the "foregroundDeletion" finalizer, until its dependents that block
// owner deletion are gone.
//
// A dependent whose reference names an owner stored in another namespace
// is reported with a Warning OwnerRefInvalidNamespace event, as upstream,
// and deleted when no owner stands in its own namespace.
//
// Not done: upstream's absent-owner cache and its parallel workers.
type GarbageCollector struct {
	store    storage.Store
	cat      *registry.Catalogue
	client   dynamic.Interface
	recorder record.EventRecorder
	log      *slog.Logger
	graph    *graph
	queue    workqueue.TypedRateLimitingInterface[work]
}

// GarbageCollectorComponent is the source of the collector's events.
const GarbageCollectorComponent = "garbage-collector-controller"

// GarbageCollectorUser is the user the collector's requests run as.
var GarbageCollectorUser = ControllerUser("generic-garbage-collector")

// NewGarbageCollector returns a collector over store whose writes go through
// client (as GarbageCollectorUser) and whose events go to recorder (from
// GarbageCollectorComponent).
func NewGarbageCollector(store storage.Store, cat *registry.Catalogue, client dynamic.Interface, recorder record.EventRecorder, log *slog.Logger) *GarbageCollector {
	gc := &GarbageCollector{store: store, cat: cat, client: client, recorder: recorder, log: log, graph: newGraph(),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[work]())}
	gc.graph.kindOf = func(group, resource string) (string, bool) {
		r, ok := gc.resourceOf(group, resource)
		if !ok {
			return "", false
		}
		return r.Kind, true
	}
	return gc
}

// Run collects garbage until ctx ends.
func (gc *GarbageCollector) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		gc.queue.ShutDown()
	}()
	go follow(ctx, gc.store, layout.Root, gc, gc.log)
	for gc.processNext(ctx) {
	}
}

func (gc *GarbageCollector) reset(items []storage.KeyValue) { gc.add(gc.graph.reset(items)) }
func (gc *GarbageCollector) event(ev storage.Event)         { gc.add(gc.graph.apply(ev)) }

func (gc *GarbageCollector) add(ws []work) {
	for _, w := range ws {
		gc.queue.Add(w)
	}
}

func (gc *GarbageCollector) processNext(ctx context.Context) bool {
	w, quit := gc.queue.Get()
	if quit {
		return false
	}
	defer gc.queue.Done(w)
	if w.invalidOwner != "" {
		gc.reportInvalidOwner(w)
	}
	var err error
	if w.orphan {
		err = gc.orphanDependents(ctx, w.uid)
	} else {
		err = gc.attemptToDelete(ctx, w.uid)
	}
	if err != nil && ctx.Err() == nil {
		gc.log.Debug("garbage collection will retry", "uid", w.uid, "err", err)
		gc.queue.AddRateLimited(w)
		return true
	}
	gc.queue.Forget(w)
	return true
}

// reportInvalidOwner records upstream's Warning OwnerRefInvalidNamespace
// event on the dependent w names: its reference to w.invalidOwner names an
// object stored in another namespace.
func (gc *GarbageCollector) reportInvalidOwner(w work) {
	dep, ok := gc.graph.get(w.uid)
	if !ok {
		return
	}
	ref, ok := dep.ownerRef(w.invalidOwner)
	r, served := gc.resourceOf(dep.group, dep.resource)
	if !ok || !served {
		return
	}
	involved := &corev1.ObjectReference{Kind: r.Kind, APIVersion: r.GroupVersion().String(),
		Namespace: dep.namespace, Name: dep.name, UID: dep.uid}
	gc.recorder.Eventf(involved, corev1.EventTypeWarning, "OwnerRefInvalidNamespace",
		"ownerRef [%s/%s, namespace: %s, name: %s, uid: %s] does not exist in namespace %q",
		ref.APIVersion, ref.Kind, dep.namespace, ref.Name, ref.UID, dep.namespace)
}

// resourceOf returns the served version of a stored group/resource.
func (gc *GarbageCollector) resourceOf(group, resource string) (*registry.Resource, bool) {
	for _, r := range gc.cat.Resources() {
		if r.Group == group && r.Resource == resource && r.Version == r.StorageVersion {
			return r, true
		}
	}
	return nil, false
}

// ownerResource maps an owner reference's apiVersion and kind to a served
// resource; a version no longer served falls back to another of the kind.
func (gc *GarbageCollector) ownerResource(ref metav1.OwnerReference) (*registry.Resource, bool) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, false
	}
	if r, ok := gc.cat.LookupKind(gv.WithKind(ref.Kind)); ok {
		return r, true
	}
	for _, r := range gc.cat.Resources() {
		if r.Group == gv.Group && r.Kind == ref.Kind {
			return r, true
		}
	}
	return nil, false
}

func (gc *GarbageCollector) resourceClient(r *registry.Resource, namespace string) dynamic.ResourceInterface {
	c := gc.client.Resource(r.GroupVersionResource)
	if r.Namespaced {
		return c.Namespace(namespace)
	}
	return c
}

// live reads the current object of n; nil when it is gone or replaced.
func (gc *GarbageCollector) live(ctx context.Context, n node) (*unstructured.Unstructured, *registry.Resource, error) {
	r, ok := gc.resourceOf(n.group, n.resource)
	if !ok {
		return nil, nil, nil
	}
	obj, err := gc.resourceClient(r, n.namespace).Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && obj.GetUID() != n.uid) {
		return nil, r, nil
	}
	return obj, r, err
}

func hasFinalizer(obj metav1.Object, f string) bool { return slices.Contains(obj.GetFinalizers(), f) }

// removeFinalizer drops finalizer f from the object of n with a merge patch
// guarded by its resourceVersion, as upstream.
func (gc *GarbageCollector) removeFinalizer(ctx context.Context, n node, f string) error {
	for attempt := 0; ; attempt++ {
		obj, r, err := gc.live(ctx, n)
		if err != nil || obj == nil || !hasFinalizer(obj, f) {
			return err
		}
		var next []string
		for _, x := range obj.GetFinalizers() {
			if x != f {
				next = append(next, x)
			}
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": obj.GetResourceVersion(), "finalizers": next}})
		if err != nil {
			return err
		}
		_, err = gc.resourceClient(r, n.namespace).Patch(ctx, n.name, types.MergePatchType, patch, metav1.PatchOptions{})
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
}

// patchOwnerRefs rewrites the owner references of the object of n with a
// merge patch guarded by its resourceVersion; edit returns the new list.
func (gc *GarbageCollector) patchOwnerRefs(ctx context.Context, n node, edit func([]metav1.OwnerReference) []metav1.OwnerReference) error {
	obj, r, err := gc.live(ctx, n)
	if err != nil || obj == nil {
		return err
	}
	refs := edit(obj.GetOwnerReferences())
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": obj.GetResourceVersion(), "ownerReferences": refs}})
	if err != nil {
		return err
	}
	_, err = gc.resourceClient(r, n.namespace).Patch(ctx, n.name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func withoutOwners(uids ...types.UID) func([]metav1.OwnerReference) []metav1.OwnerReference {
	return func(refs []metav1.OwnerReference) []metav1.OwnerReference {
		var out []metav1.OwnerReference
		for _, ref := range refs {
			if !slices.Contains(uids, ref.UID) {
				out = append(out, ref)
			}
		}
		return out
	}
}

// orphanDependents removes the owner's uid from its dependents' references,
// then its "orphan" finalizer.
func (gc *GarbageCollector) orphanDependents(ctx context.Context, uid types.UID) error {
	owner, ok := gc.graph.get(uid)
	if !ok {
		return nil
	}
	for _, dep := range gc.graph.dependentsOf(uid) {
		if err := gc.patchOwnerRefs(ctx, dep, withoutOwners(uid)); err != nil {
			return fmt.Errorf("orphaning %s: %w", dep.key, err)
		}
	}
	return gc.removeFinalizer(ctx, owner, metav1.FinalizerOrphanDependents)
}
