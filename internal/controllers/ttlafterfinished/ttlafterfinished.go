// Package ttlafterfinished is kube-controller-manager's TTL-after-finished
// controller (ttl-after-finished-controller), as upstream's
// pkg/controller/ttlafterfinished: a Job with spec.ttlSecondsAfterFinished
// is deleted that many seconds after its Complete or Failed condition
// became True, with foreground propagation (its pods go first) and a
// precondition on its uid, after a fresh read from the server confirms it
// is due. It records no events. It reads Jobs from storage through a watch
// and deletes as its own service account, through admission.
package ttlafterfinished

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "ttl-after-finished-controller"

// User is kube-controller-manager's ttl-after-finished-controller
// service account.
var User = controllers.ControllerUser("ttl-after-finished-controller")

// defaultWorkers is --concurrent-ttl-after-finished-syncs.
const defaultWorkers = 5

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // deletes as User
	Log       *slog.Logger
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
}

// Controller deletes finished Jobs whose TTL has passed.
type Controller struct {
	caches    *controllers.Caches
	ownCaches bool // caches are the controller's own, started by Run
	client    kubernetes.Interface
	log       *slog.Logger
	jobs      *watchcache.Cache[*batchv1.Job]
	queue     workqueue.TypedRateLimitingInterface[string]
	now       func() time.Time
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{caches: cfg.Caches, client: cfg.Client, log: cfg.Log, now: time.Now,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "ttl_jobs_to_delete"})}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	var err error
	c.jobs, err = controllers.Shared(c.caches, batchv1.SchemeGroupVersion.WithResource("jobs"),
		watchcache.Handlers[*batchv1.Job]{Add: c.enqueueIfDue, Update: func(_, cur *batchv1.Job) { c.enqueueIfDue(cur) }})
	return c, err
}

// Run follows storage and deletes expired Jobs until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	controllers.RunWorkers(ctx, c.queue, []<-chan struct{}{c.jobs.Synced()}, defaultWorkers, c.processNext)
}

func (c *Controller) enqueueIfDue(j *batchv1.Job) {
	if j.DeletionTimestamp == nil && needsCleanup(j) {
		c.queue.Add(j.Namespace + "/" + j.Name)
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.process(ctx, key); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("cleaning up a Job failed, will retry", "key", key, "err", err)
			c.queue.AddRateLimited(key)
		}
		return true
	}
	c.queue.Forget(key)
	return true
}

// process deletes the Job at key if its TTL has passed, by the cache and
// then by a fresh read; otherwise it comes back when it will have.
func (c *Controller) process(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	j, ok := c.jobs.Get(ns, name)
	if !ok {
		return nil
	}
	if due, err := c.due(j, key); err != nil || !due {
		return err
	}
	fresh, err := c.client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if due, err := c.due(fresh, key); err != nil || !due {
		return err
	}
	policy := metav1.DeletePropagationForeground
	return c.client.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &fresh.UID}})
}

// due reports whether j is to be deleted now; one due later is queued
// again for then.
func (c *Controller) due(j *batchv1.Job, key string) (bool, error) {
	if j.DeletionTimestamp != nil || !needsCleanup(j) {
		return false, nil
	}
	finished, err := finishTime(j)
	if err != nil {
		return false, err
	}
	left := finished.Add(time.Duration(*j.Spec.TTLSecondsAfterFinished) * time.Second).Sub(c.now())
	if left <= 0 {
		return true, nil
	}
	c.queue.AddAfter(key, left)
	return false, nil
}

// needsCleanup: the Job has a TTL and has finished.
func needsCleanup(j *batchv1.Job) bool {
	return j.Spec.TTLSecondsAfterFinished != nil && finishedCondition(j) != nil
}

func finishedCondition(j *batchv1.Job) *batchv1.JobCondition {
	for i, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// finishTime is when the Job's Complete or Failed condition became True.
func finishTime(j *batchv1.Job) (time.Time, error) {
	c := finishedCondition(j)
	if c == nil {
		return time.Time{}, fmt.Errorf("unable to find the status of the finished Job %s/%s", j.Namespace, j.Name)
	}
	if c.LastTransitionTime.IsZero() {
		return time.Time{}, fmt.Errorf("unable to find the time when the Job %s/%s finished", j.Namespace, j.Name)
	}
	return c.LastTransitionTime.Time, nil
}
