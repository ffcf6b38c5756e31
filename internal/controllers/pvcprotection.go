package controllers

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/storage/ephemeral"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// PVCProtection is upstream's pvc-protection controller
// (pkg/controller/volume/pvcprotection): a deleted PersistentVolumeClaim
// keeps the kubernetes.io/pvc-protection finalizer, which the
// StorageObjectInUseProtection admission plugin adds, while a scheduled pod
// of its namespace uses it, and loses it once none does. A pod uses a claim
// it names in a persistentVolumeClaim volume (even once it has finished,
// as upstream: until it is deleted), or the claim of one of its generic
// ephemeral volumes if the pod controls that claim and is not being deleted
// without a grace period.
//
// Unlike upstream it does not add the finalizer to claims that lack it
// (admission does that), nor keep the Unused condition of
// PersistentVolumeClaimUnusedSinceTime.
type PVCProtection struct {
	store  storage.Store
	claims *registry.Resource
	pods   *registry.Resource
	client dynamic.Interface
	log    *slog.Logger
	queue  workqueue.TypedRateLimitingInterface[string] // namespace/name of a claim

	// deleting holds, per namespace, the claims that are being deleted and
	// still have the finalizer: a pod event in the namespace checks them
	// again. Only the watch goroutine touches it.
	deleting map[string]map[string]bool
}

// PVCProtectionUser is the user the controller's requests run as.
var PVCProtectionUser = ControllerUser("pvc-protection-controller")

// PVCProtectionFinalizer holds a PersistentVolumeClaim while pods use it.
const PVCProtectionFinalizer = "kubernetes.io/pvc-protection"

var (
	claimsGVR    = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	podsGVR      = corev1.SchemeGroupVersion.WithResource("pods")
	claimsPrefix = layout.GroupPrefix("") + "persistentvolumeclaims/"
	podsPrefix   = layout.GroupPrefix("") + "pods/"
)

// NewPVCProtection returns the controller; its updates go through client
// (as PVCProtectionUser).
func NewPVCProtection(store storage.Store, cat *registry.Catalogue, client dynamic.Interface, log *slog.Logger) *PVCProtection {
	claims, _ := cat.Lookup(claimsGVR)
	pods, _ := cat.Lookup(podsGVR)
	return &PVCProtection{store: store, claims: claims, pods: pods, client: client, log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "pvcprotection"})}
}

// Run releases deleted claims until ctx ends.
func (c *PVCProtection) Run(ctx context.Context) {
	runQueue(ctx, c.store, layout.GroupPrefix(""), c, c.queue, c.sync, c.log, "releasing a deleted claim will retry", "claim")
}

func (c *PVCProtection) reset(items []storage.KeyValue) {
	c.deleting = map[string]map[string]bool{}
	for _, kv := range items {
		if rest, ok := strings.CutPrefix(kv.Key, claimsPrefix); ok {
			c.claimWritten(rest, kv.Value)
		}
	}
}

// event follows the claims being deleted, and checks those of a namespace
// again when one of its pods changes or goes.
func (c *PVCProtection) event(ev storage.Event) {
	if rest, ok := strings.CutPrefix(ev.KV.Key, claimsPrefix); ok {
		if ev.Type == storage.EventPut {
			c.claimWritten(rest, ev.KV.Value)
		} else if ns, name, ok := strings.Cut(rest, "/"); ok {
			delete(c.deleting[ns], name)
		}
		return
	}
	if rest, ok := strings.CutPrefix(ev.KV.Key, podsPrefix); ok {
		ns, _, _ := strings.Cut(rest, "/")
		for name := range c.deleting[ns] {
			c.queue.Add(ns + "/" + name)
		}
	}
}

// claimWritten queues the claim at key (namespace/name) if it is being
// deleted and holds the finalizer, and keeps deleting up to date.
func (c *PVCProtection) claimWritten(key string, value []byte) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return
	}
	s, err := decodeStored(value)
	if err != nil || !deletionCandidate(&s.Metadata, PVCProtectionFinalizer) {
		delete(c.deleting[ns], name)
		return
	}
	if c.deleting[ns] == nil {
		c.deleting[ns] = map[string]bool{}
	}
	c.deleting[ns][name] = true
	c.queue.Add(key)
}

// deletionCandidate reports whether m is being deleted and still holds
// finalizer (upstream's protectionutil.IsDeletionCandidate).
func deletionCandidate(m *storedMetadata, finalizer string) bool {
	return m.DeletionTimestamp != nil && slices.Contains(m.Finalizers, finalizer)
}

// sync removes the finalizer of the claim at key if it is being deleted
// and no pod uses it.
func (c *PVCProtection) sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	kv, err := c.store.Get(ctx, layout.Key(c.claims, ns, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	obj, err := layout.Decode(c.claims, kv)
	if err != nil {
		return err
	}
	pvc := obj.(*corev1.PersistentVolumeClaim)
	if pvc.DeletionTimestamp == nil || !slices.Contains(pvc.Finalizers, PVCProtectionFinalizer) {
		return nil
	}
	used, err := c.inUse(ctx, pvc)
	if err != nil || used {
		return err
	}
	pvc.Finalizers = slices.DeleteFunc(pvc.Finalizers, func(f string) bool { return f == PVCProtectionFinalizer })
	return updateRead(ctx, c.client.Resource(claimsGVR).Namespace(ns), pvc)
}

// inUse reports whether a pod of the claim's namespace uses it, reading the
// pods from storage (upstream lists them live from the API server so that
// its informer's lag cannot release a claim in use; storage has none).
func (c *PVCProtection) inUse(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (bool, error) {
	page, err := c.store.List(ctx, layout.ResourcePrefix(c.pods)+pvc.Namespace+"/", storage.ListOptions{})
	if err != nil {
		return false, err
	}
	for _, kv := range page.Items {
		obj, err := layout.Decode(c.pods, kv)
		if err != nil {
			return false, err
		}
		if podUsesClaim(obj.(*corev1.Pod), pvc) {
			c.log.Debug("keeping a deleted claim a pod uses", "claim", pvc.Namespace+"/"+pvc.Name, "pod", obj.(*corev1.Pod).Name)
			return true, nil
		}
	}
	return false, nil
}

// podUsesClaim is upstream's decision: only a scheduled pod counts (the
// kubelet does not start a pod whose claim is being deleted); it keeps a
// claim named in a persistentVolumeClaim volume whatever its phase, and the
// claim of a generic ephemeral volume it controls unless it is being
// deleted with no grace period.
func podUsesClaim(pod *corev1.Pod, pvc *corev1.PersistentVolumeClaim) bool {
	if pod.Spec.NodeName == "" {
		return false
	}
	shutDown := pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
			return true
		}
		if !shutDown && v.Ephemeral != nil && ephemeral.VolumeClaimName(pod, v) == pvc.Name && ephemeral.VolumeIsForPod(pod, pvc) == nil {
			return true
		}
	}
	return false
}
