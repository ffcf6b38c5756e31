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

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// PVProtection is upstream's pv-protection controller
// (pkg/controller/volume/pvprotection): a deleted PersistentVolume keeps
// the kubernetes.io/pv-protection finalizer, which the
// StorageObjectInUseProtection admission plugin adds, while it is Bound
// (status.phase), and loses it once it is not.
//
// Unlike upstream it does not add the finalizer to volumes that lack it
// (admission does that).
type PVProtection struct {
	store   storage.Store
	volumes *registry.Resource
	client  dynamic.Interface
	log     *slog.Logger
	queue   workqueue.TypedRateLimitingInterface[string] // volume name
}

// PVProtectionUser is the user the controller's requests run as.
var PVProtectionUser = ControllerUser("pv-protection-controller")

// PVProtectionFinalizer holds a PersistentVolume while it is bound.
const PVProtectionFinalizer = "kubernetes.io/pv-protection"

var (
	volumesGVR    = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	volumesPrefix = layout.GroupPrefix("") + "persistentvolumes/"
)

// NewPVProtection returns the controller; its updates go through client
// (as PVProtectionUser).
func NewPVProtection(store storage.Store, cat *registry.Catalogue, client dynamic.Interface, log *slog.Logger) *PVProtection {
	volumes, _ := cat.Lookup(volumesGVR)
	return &PVProtection{store: store, volumes: volumes, client: client, log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "pvprotection"})}
}

// Run releases deleted volumes until ctx ends.
func (c *PVProtection) Run(ctx context.Context) {
	runQueue(ctx, c.store, volumesPrefix, c, c.queue, c.sync, c.log, "releasing a deleted volume will retry", "volume")
}

func (c *PVProtection) reset(items []storage.KeyValue) {
	for _, kv := range items {
		c.written(kv)
	}
}

func (c *PVProtection) event(ev storage.Event) {
	if ev.Type == storage.EventPut {
		c.written(ev.KV)
	}
}

// written queues a volume being deleted that holds the finalizer.
func (c *PVProtection) written(kv storage.KeyValue) {
	name, ok := strings.CutPrefix(kv.Key, volumesPrefix)
	if !ok {
		return
	}
	if s, err := decodeStored(kv.Value); err == nil && deletionCandidate(&s.Metadata, PVProtectionFinalizer) {
		c.queue.Add(name)
	}
}

// sync removes the finalizer of the volume if it is being deleted and is
// not Bound.
func (c *PVProtection) sync(ctx context.Context, name string) error {
	kv, err := c.store.Get(ctx, layout.Key(c.volumes, "", name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	obj, err := layout.Decode(c.volumes, kv)
	if err != nil {
		return err
	}
	pv := obj.(*corev1.PersistentVolume)
	if pv.DeletionTimestamp == nil || !slices.Contains(pv.Finalizers, PVProtectionFinalizer) {
		return nil
	}
	if pv.Status.Phase == corev1.VolumeBound {
		c.log.Debug("keeping a deleted volume that is bound", "volume", name)
		return nil
	}
	pv.Finalizers = slices.DeleteFunc(pv.Finalizers, func(f string) bool { return f == PVProtectionFinalizer })
	return updateRead(ctx, c.client.Resource(volumesGVR), pv)
}
