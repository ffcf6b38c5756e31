// Package storageversionmigrator is kube-controller-manager's
// storage-version-migrator-controller (pkg/controller/storageversionmigrator,
// on by default in 1.37): for each StorageVersionMigration it rewrites every
// stored object of the named resource with a no-op patch, so that objects
// stored in an older version or encoding are written again as the server
// now stores them, and reports progress in the migration's conditions
// (Running, then Succeeded or Failed). Migrations of one resource run one at
// a time, oldest first. For a custom resource it also marks the
// definition's StorageMigrating condition and, once migrated, trims its
// status.storedVersions to the storage version.
//
// It is a client of the server: it reads migrations and the objects to
// migrate from the Store, and writes (the patches, migration status,
// definition status) through the loopback client as its service account,
// so authorization, admission and managedFields see its requests as they
// see kube-controller-manager's. It is not the storage layer's own
// re-encryption or re-encoding: a patch that changes nothing the server
// would store is, as upstream, not written.
package storageversionmigrator

import (
	"context"
	"log/slog"
	"time"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's name: its service account and the field manager
// of its patches.
const Name = "storage-version-migrator-controller"

// User is the user the controller's requests run as.
var User = controllers.ControllerUser(Name)

var migrationsGVR = storagemigrationv1.SchemeGroupVersion.WithResource("storageversionmigrations")

// Controller runs the StorageVersionMigrations of a server.
type Controller struct {
	store      storage.Store
	cat        *registry.Catalogue
	client     dynamic.Interface
	migrations *registry.Resource
	log        *slog.Logger
	// queue holds the resources (metav1.GroupResource.String()) whose
	// migrations changed.
	queue workqueue.TypedRateLimitingInterface[string]
	now   func() time.Time
}

// New returns the controller; its writes go through client (as User).
func New(store storage.Store, cat *registry.Catalogue, client dynamic.Interface, log *slog.Logger) *Controller {
	migrations, _ := cat.Lookup(migrationsGVR)
	return &Controller{store: store, cat: cat, client: client, migrations: migrations, log: log, now: time.Now,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
}

// Run migrates until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	go controllers.Follow(ctx, c.store, layout.ResourcePrefix(c.migrations), followed{c}, c.log)
	for c.processNext(ctx) {
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil && ctx.Err() == nil {
		c.log.Debug("storage version migration will retry", "resource", key, "err", err)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// reset queues the resource of every migration.
// followed is the controller as the follower of its migrations.
type followed struct{ c *Controller }

func (f followed) Reset(items []storage.KeyValue) { f.c.reset(items) }
func (f followed) Event(ev storage.Event)         { f.c.event(ev) }

func (c *Controller) reset(items []storage.KeyValue) {
	for _, kv := range items {
		c.enqueue(kv)
	}
}

// event queues the resource of a migration written or deleted (a delete
// lets the next migration of its resource start).
func (c *Controller) event(ev storage.Event) {
	if ev.Type == storage.EventDelete {
		if ev.PrevKV != nil {
			c.enqueue(*ev.PrevKV)
		}
		return
	}
	c.enqueue(ev.KV)
}

func (c *Controller) enqueue(kv storage.KeyValue) {
	m, err := c.decode(kv)
	if err != nil {
		c.log.Warn("decoding a StorageVersionMigration", "key", kv.Key, "err", err)
		return
	}
	c.queue.Add(m.Spec.Resource.String())
}

func (c *Controller) decode(kv storage.KeyValue) (*storagemigrationv1.StorageVersionMigration, error) {
	obj, err := layout.Decode(c.migrations, kv)
	if err != nil {
		return nil, err
	}
	return obj.(*storagemigrationv1.StorageVersionMigration), nil
}

// toUnstructured is obj as the dynamic client sends it.
func toUnstructured(obj runtime.Object) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}
