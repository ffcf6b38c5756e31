// Package daemonset is kube-controller-manager's DaemonSet controller
// (daemonset-controller), as upstream's pkg/controller/daemon: each
// DaemonSet gets one pod on every node its pods may run on (the template's
// nodeSelector and required node affinity, the node's taints against the
// template's tolerations and the ones every daemon pod gets), created
// with a node affinity naming that node (metadata.name in matchFields),
// generateName "<daemonset>-", the labels controller-revision-hash and
// pod-template-generation and a controller ownerReference; each template
// is kept as a ControllerRevision "<daemonset>-<hash>" with upstream's
// hash; a template change rolls out within maxUnavailable and maxSurge
// (RollingUpdate) or waits for pods to be deleted (OnDelete); old
// revisions beyond revisionHistoryLimit are deleted; the status counts
// and the SuccessfulCreate, FailedCreate, SuccessfulDelete, FailedDelete,
// FailedDaemonPod and SucceededDaemonPod events are upstream's.
//
// As the ReplicaSet controller (internal/controllers/replicaset), it reads
// from storage through a watch and writes only as a client of the server,
// as its own service account, through admission. It schedules nothing:
// its pods are bound by a scheduler (internal/nodesim's, on simulated
// nodes) that honours the node affinity it sets.
package daemonset

import (
	"context"
	"log/slog"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name, Component the source of
// its events.
const (
	Name      = "daemonset-controller"
	Component = "daemonset-controller"
	// workers is kube-controller-manager's --concurrent-daemonset-syncs.
	workers = 2
	// burstReplicas is the most pods one sync creates or deletes
	// (upstream's BurstReplicas).
	burstReplicas = 250
	// slowStartInitialBatch is the first batch of creates; each batch that
	// succeeds doubles the next (upstream's SlowStartInitialBatchSize).
	slowStartInitialBatch = 1
)

// User is kube-controller-manager's daemon-set-controller service account.
var User = controllers.ControllerUser("daemon-set-controller")

var controllerKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface
	Recorder  record.EventRecorder
	Log       *slog.Logger
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
}

// Controller keeps DaemonSets' pods and revisions.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	log       *slog.Logger
	caches    *controllers.Caches
	ownCaches bool // caches are the controller's own, started by Run

	daemonSets *watchcache.Cache[*appsv1.DaemonSet]
	revisions  *watchcache.Cache[*appsv1.ControllerRevision]
	pods       *watchcache.Cache[*corev1.Pod]
	nodes      *watchcache.Cache[*corev1.Node]

	queue     workqueue.TypedRateLimitingInterface[string]
	nodeQueue workqueue.TypedRateLimitingInterface[string]

	expectations *controllers.Expectations
	// failedPodsBackoff spaces out the deletion of a node's failed daemon
	// pods (kube-controller-manager's 1s to 15min).
	failedPodsBackoff *flowcontrol.Backoff
	now               func() time.Time
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, now: time.Now,
		expectations:      controllers.NewExpectations(),
		failedPodsBackoff: flowcontrol.NewBackOff(time.Second, 15*time.Minute),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "daemonset"}),
		nodeQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "daemonset-node-updates"})}
	if c.caches = cfg.Caches; c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	var err error
	if c.daemonSets, err = controllers.Shared(c.caches, appsv1.SchemeGroupVersion.WithResource("daemonsets"),
		watchcache.Handlers[*appsv1.DaemonSet]{Add: c.enqueue, Update: c.updateDaemonSet, Remove: c.deleteDaemonSet}); err != nil {
		return nil, err
	}
	if c.revisions, err = controllers.Shared(c.caches, appsv1.SchemeGroupVersion.WithResource("controllerrevisions"),
		watchcache.Handlers[*appsv1.ControllerRevision]{Add: c.addRevision, Update: c.updateRevision, Remove: c.deleteRevision}); err != nil {
		return nil, err
	}
	if c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"),
		watchcache.Handlers[*corev1.Pod]{Add: c.addPod, Update: c.updatePod, Remove: c.deletePod}); err != nil {
		return nil, err
	}
	controllers.IndexPodsByController(c.pods)
	if c.nodes, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("nodes"),
		watchcache.Handlers[*corev1.Node]{Add: c.addNode, Update: c.updateNode, Remove: c.deleteNode}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run follows storage and syncs DaemonSets until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	synced := []<-chan struct{}{c.daemonSets.Synced(), c.revisions.Synced(), c.pods.Synced(), c.nodes.Synced()}
	controllers.RunWorkerPools(ctx, synced,
		controllers.WorkerPool{Queue: c.queue, Workers: workers, ProcessNext: func(ctx context.Context) bool {
			return c.processNext(ctx, c.queue, c.sync, "daemonset")
		}},
		controllers.WorkerPool{Queue: c.nodeQueue, Workers: workers, ProcessNext: func(ctx context.Context) bool {
			return c.processNext(ctx, c.nodeQueue, c.syncNodeUpdate, "node")
		}},
		controllers.WorkerPool{Workers: 1, ProcessNext: c.collectBackoffGarbage})
}

// collectBackoffGarbage forgets the failed pods' expired backoffs every
// minute until ctx ends.
func (c *Controller) collectBackoffGarbage(ctx context.Context) bool {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			c.failedPodsBackoff.GC()
		}
	}
}

// processNext syncs one key of queue; a failure is retried with the
// queue's backoff, as upstream's (without a limit).
func (c *Controller) processNext(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) error, what string) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	err := sync(ctx, key)
	switch {
	case err == nil || ctx.Err() != nil:
		queue.Forget(key)
	default:
		level := slog.LevelWarn
		if apierrors.IsConflict(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			level = slog.LevelDebug
		}
		c.log.Log(ctx, level, "syncing will retry", what, key, "err", err)
		queue.AddRateLimited(key)
	}
	return true
}

func key(namespace, name string) string { return namespace + "/" + name }

func cutKey(k string) (namespace, name string, ok bool) { return strings.Cut(k, "/") }

func (c *Controller) enqueue(ds *appsv1.DaemonSet) { c.queue.Add(key(ds.Namespace, ds.Name)) }

func (c *Controller) enqueueAfter(ds *appsv1.DaemonSet, d time.Duration) {
	c.queue.AddAfter(key(ds.Namespace, ds.Name), d)
}
