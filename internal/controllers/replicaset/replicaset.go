// Package replicaset is kube-controller-manager's ReplicaSet controller
// (replicaset-controller) and ReplicationController controller
// (replicationcontroller-controller), as upstream's
// pkg/controller/replicaset: it keeps spec.replicas pods of each
// controller, created from its template (generateName "<name>-", a
// controller ownerReference) in slow-start batches, and deleted the least
// useful first on scale down; it adopts the orphans its selector matches
// and releases the pods it no longer matches; and it keeps the status
// (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas,
// terminatingReplicas, observedGeneration and the ReplicaFailure
// condition), recording SuccessfulCreate, FailedCreate, SuccessfulDelete
// and FailedDelete events as upstream words them.
//
// It reads pods and controllers from storage through a watch (the
// informers of a client-go controller) and writes only as a client of the
// server, as its own service account: every pod it creates is
// authenticated, authorized and admitted as kube-controller-manager's, so
// PodSecurity, ResourceQuota, LimitRanger, webhooks and policies decide
// on it, and their refusals become its FailedCreate events and condition.
// It is not a scheduler or a kubelet: pods become ready when something
// else writes their status.
package replicaset

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

const (
	// burstReplicas is the most pods one sync creates or deletes
	// (upstream's BurstReplicas).
	burstReplicas = 500
	// defaultWorkers is kube-controller-manager's
	// --concurrent-replicaset-syncs (and --concurrent-rc-syncs).
	defaultWorkers = 5
)

// Config is what a controller needs.
type Config struct {
	Kind      Kind
	Store     storage.Store
	Catalogue *registry.Catalogue
	// Client writes as Kind.User; Recorder records events as
	// Kind.Component through the same transport.
	Client   kubernetes.Interface
	Recorder record.EventRecorder
	Log      *slog.Logger
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
	// Workers sync that many controllers at once; 0 means 5.
	Workers int
}

// Controller keeps the replicas of one Kind.
type Controller struct {
	kind          Kind
	store         storage.Store
	client        kubernetes.Interface
	recorder      record.EventRecorder
	log           *slog.Logger
	workers       int
	ownersPrefix  string
	caches        *controllers.Caches
	ownCaches     bool // caches are the controller's own, started by Run
	privateOwners bool // owners is the controller's own cache, not one of caches

	pods         *watchcache.Cache[*corev1.Pod]
	owners       *watchcache.Cache[*appsv1.ReplicaSet]
	expectations *controllers.Expectations
	queue        workqueue.TypedRateLimitingInterface[string]
	now          func() time.Time
}

// New returns the controller of cfg.Kind.
func New(cfg Config) (*Controller, error) {
	ownersRes, ok := cfg.Catalogue.Lookup(cfg.Kind.gvr)
	if !ok {
		return nil, fmt.Errorf("%s are not served", cfg.Kind.gvr.Resource)
	}
	c := &Controller{kind: cfg.Kind, store: cfg.Store, client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log,
		workers: cfg.Workers, ownersPrefix: layout.ResourcePrefix(ownersRes), caches: cfg.Caches,
		expectations: controllers.NewExpectations(), now: time.Now,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: cfg.Kind.Name})}
	if c.workers <= 0 {
		c.workers = defaultWorkers
	}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	var err error
	if c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"),
		watchcache.Handlers[*corev1.Pod]{Add: c.addPod, Update: c.updatePod, Remove: c.deletePodEvent}); err != nil {
		return nil, err
	}
	controllers.IndexPodsByController(c.pods)
	ownerHandlers := watchcache.Handlers[*appsv1.ReplicaSet]{Add: c.enqueue, Update: c.updateOwner, Remove: c.deleteOwner}
	if c.kind.gvk.Kind == "ReplicaSet" {
		c.owners, err = controllers.Shared(c.caches, c.kind.gvr, ownerHandlers)
		return c, err
	}
	// ReplicationControllers are cached converted to ReplicaSets, for
	// this controller alone.
	onError := func(key string, err error) { c.log.Warn("decoding a stored object", "key", key, "err", err) }
	c.owners = watchcache.New(c.ownersPrefix, func(kv storage.KeyValue) (*appsv1.ReplicaSet, error) {
		obj, err := layout.Decode(ownersRes, kv)
		if err != nil {
			return nil, err
		}
		return c.kind.toReplicaSet(obj), nil
	}, ownerHandlers, onError)
	c.privateOwners = true
	return c, nil
}

// Run follows storage and syncs controllers until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.privateOwners {
		go controllers.Follow(ctx, c.store, c.ownersPrefix, c.owners, c.log)
	}
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	controllers.RunWorkers(ctx, c.queue, []<-chan struct{}{c.owners.Synced(), c.pods.Synced()}, c.workers, c.processNext)
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		if ctx.Err() == nil {
			c.log.Log(ctx, syncErrorLevel(err), "sync failed, will retry", "key", key, "err", err)
			c.queue.AddRateLimited(key)
		}
		return true
	}
	c.queue.Forget(key)
	return true
}

// syncErrorLevel: a refusal by the server (admission, authorization) is a
// warning; the rest (conflicts with a newer version) is routine.
func syncErrorLevel(err error) slog.Level {
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

func key(namespace, name string) string { return namespace + "/" + name }

func (c *Controller) enqueue(rs *appsv1.ReplicaSet) { c.queue.Add(key(rs.Namespace, rs.Name)) }

// sync makes the controller at key have its replicas, unless it still
// waits for pods it created or deleted to be seen, and writes its status.
func (c *Controller) sync(ctx context.Context, k string) error {
	ns, name, _ := cutKey(k)
	rs, ok := c.owners.Get(ns, name)
	if !ok {
		c.expectations.Forget(k)
		return nil
	}
	needsSync := c.expectations.Satisfied(k)
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		c.log.Warn("invalid selector", "key", k, "err", err)
		return nil
	}
	owned := controllers.PodsOfController(c.pods, rs, c.kind.gvk.Kind, true)
	var active, terminating []*corev1.Pod
	for _, p := range owned {
		if isPodActive(p) {
			active = append(active, p)
		} else if c.kind.terminatingReplicas && isPodTerminating(p) && metav1.IsControlledBy(p, rs) && selector.Matches(labels.Set(p.Labels)) {
			terminating = append(terminating, p)
		}
	}
	sortByName(active)
	if active, err = c.claimPods(ctx, rs, selector, active); err != nil {
		return err
	}
	var manageErr error
	if needsSync && rs.DeletionTimestamp == nil {
		manageErr = c.manageReplicas(ctx, active, rs)
	}
	rs = rs.DeepCopy()
	now := c.now()
	updated, err := c.updateStatus(ctx, rs, c.calculateStatus(rs, active, terminating, manageErr, now))
	if err != nil {
		return err
	}
	if manageErr != nil {
		return manageErr
	}
	if updated.Spec.MinReadySeconds > 0 && updated.Status.ReadyReplicas != updated.Status.AvailableReplicas {
		next := time.Duration(updated.Spec.MinReadySeconds) * time.Second
		if d := nextAvailabilityCheck(active, updated.Spec.MinReadySeconds, c.now()); d != nil {
			next = *d
		}
		c.queue.AddAfter(k, next)
	}
	return nil
}

// manageReplicas creates or deletes pods so that rs has spec.replicas
// active ones (at most burstReplicas per sync); it returns the first
// error, after which a later sync retries.
func (c *Controller) manageReplicas(ctx context.Context, active []*corev1.Pod, rs *appsv1.ReplicaSet) error {
	k := key(rs.Namespace, rs.Name)
	diff := len(active) - int(*rs.Spec.Replicas)
	switch {
	case diff < 0:
		n := min(-diff, burstReplicas)
		c.expectations.Expect(k, n, 0)
		created, err := slowStartBatch(n, func() error {
			err := c.createPod(ctx, rs)
			if err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil // every create would fail: nothing to retry
			}
			return err
		})
		for range n - created {
			c.expectations.CreationObserved(k) // never to be seen
		}
		return err
	case diff > 0:
		n := min(diff, burstReplicas)
		victims := PodsToDelete(active, c.relatedPods(rs), n, c.now())
		keys := make([]string, len(victims))
		for i, p := range victims {
			keys[i] = key(p.Namespace, p.Name)
		}
		c.expectations.ExpectDeletionsOf(k, keys)
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for i, p := range victims {
			wg.Go(func() {
				if err := c.deletePod(ctx, rs, p.Name); err != nil {
					c.expectations.DeletionOfObserved(k, keys[i])
					if !apierrors.IsNotFound(err) {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		select {
		case err := <-errs:
			return err
		default:
		}
	}
	return nil
}

// slowStartBatch calls fn count times, in batches of 1, 2, 4, … calls at
// once, stopping after the first batch with a failure; it returns how many
// calls succeeded and the first error.
func slowStartBatch(count int, fn func() error) (int, error) {
	successes := 0
	for batch := min(count, 1); batch > 0; batch = min(2*batch, count-successes) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			wg.Go(func() {
				if err := fn(); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		successes += batch - len(errs)
		if len(errs) > 0 {
			return successes, <-errs
		}
	}
	return successes, nil
}

// relatedPods are the pods of every controller with the same owner as rs
// (the ReplicaSets of one Deployment), each once.
func (c *Controller) relatedPods(rs *appsv1.ReplicaSet) []*corev1.Pod {
	ref := metav1.GetControllerOfNoCopy(rs)
	if ref == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []*corev1.Pod
	for _, other := range c.owners.List(rs.Namespace, func(o *appsv1.ReplicaSet) bool {
		r := metav1.GetControllerOfNoCopy(o)
		return r != nil && r.UID == ref.UID
	}) {
		sel, err := metav1.LabelSelectorAsSelector(other.Spec.Selector)
		if err != nil {
			continue
		}
		for _, p := range c.pods.List(rs.Namespace, func(p *corev1.Pod) bool { return sel.Matches(labels.Set(p.Labels)) }) {
			if !seen[string(p.UID)] {
				seen[string(p.UID)] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// updateOwner queues a changed controller; one replaced by another of the
// same name is first handled as deleted.
func (c *Controller) updateOwner(old, cur *appsv1.ReplicaSet) {
	if old.UID != cur.UID {
		c.deleteOwner(old)
	}
	c.enqueue(cur)
}

// deleteOwner forgets a deleted controller's expectations, so one created
// again with its name starts clean.
func (c *Controller) deleteOwner(rs *appsv1.ReplicaSet) {
	k := key(rs.Namespace, rs.Name)
	c.expectations.Forget(k)
	c.queue.Add(k)
}
