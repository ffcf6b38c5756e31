// Package job is kube-controller-manager's Job controller (job-controller),
// as upstream's pkg/controller/job: it runs a Job's pods from its template
// (parallelism at a time, until completions have succeeded, or, for an
// Indexed Job, one per completion index), each carrying the
// batch.kubernetes.io/job-tracking finalizer until the controller has
// counted it through status.uncountedTerminatedPods; it replaces failed
// pods after an exponential backoff, and finishes the Job with the
// SuccessCriteriaMet then Complete conditions, or FailureTarget then Failed
// (BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy,
// FailedIndexes, MaxFailedIndexesExceeded), recording the events upstream
// records. It suspends and resumes Jobs and applies their pod failure and
// success policies.
//
// It reads Jobs and pods from storage through a watch and writes only as a
// client of the server, as its own service account, through admission: a
// pod that admission refuses becomes a FailedCreate event with the
// server's message. It is not a kubelet: pods finish when something else
// writes their status (a node, nodesim, or a test). Jobs managed by
// another controller (spec.managedBy) and the WorkloadWithJob scheduling
// integration are left alone.
package job

import (
	"context"
	"log/slog"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name, Component the source of
// its events; User is who its requests run as.
const (
	Name      = "job-controller"
	Component = "job-controller"
)

// User is kube-controller-manager's job-controller service account.
var User = controllers.ControllerUser("job-controller")

// Timing, as upstream's (pkg/controller/job).
const (
	// syncBatchPeriod delays the syncs that pod events and status writes
	// ask for, so that a burst of them makes one sync.
	syncBatchPeriod = time.Second
	// apiBackoff and maxAPIBackoff bound the retries of a failed sync.
	apiBackoff    = time.Second
	maxAPIBackoff = time.Minute
	// podFailureBackoff doubles with each failure since the last success,
	// up to maxPodFailureBackoff, before a failed pod is replaced.
	podFailureBackoff    = 10 * time.Second
	maxPodFailureBackoff = 10 * time.Minute
	// maxUncountedPods caps status.uncountedTerminatedPods (~20 KB).
	maxUncountedPods = 500
	// maxPodChangesPerSync caps the pods one sync creates or deletes.
	maxPodChangesPerSync = 500
	// defaultWorkers is kube-controller-manager's --concurrent-job-syncs.
	defaultWorkers = 5
)

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	// Client writes as User; Recorder records events as Component.
	Client   kubernetes.Interface
	Recorder record.EventRecorder
	Log      *slog.Logger
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
	// Workers sync that many Jobs at once; 0 means 5.
	Workers int
}

// Controller runs Jobs' pods and keeps their status.
type Controller struct {
	caches    *controllers.Caches
	ownCaches bool // caches are the controller's own, started by Run
	client    kubernetes.Interface
	recorder  record.EventRecorder
	log       *slog.Logger
	workers   int

	pods *watchcache.Cache[*corev1.Pod]
	jobs *watchcache.Cache[*batchv1.Job]

	expectations          *controllers.Expectations
	finalizerExpectations *finalizerExpectations
	backoffs              *backoffStore
	// finishedJobs are the uids of Jobs this controller has written
	// finished and not yet seen so in its cache.
	finishedJobs sync.Map

	queue       workqueue.TypedRateLimitingInterface[string]
	orphanQueue workqueue.TypedRateLimitingInterface[orphanKey]
	now         func() time.Time
}

// New returns the Job controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{caches: cfg.Caches, client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, workers: cfg.Workers,
		expectations: controllers.NewExpectations(), finalizerExpectations: newFinalizerExpectations(), backoffs: newBackoffStore(),
		now: time.Now,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](apiBackoff, maxAPIBackoff),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "job"}),
		orphanQueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[orphanKey](apiBackoff, maxAPIBackoff),
			workqueue.TypedRateLimitingQueueConfig[orphanKey]{Name: "job_orphan_pod"})}
	if c.workers <= 0 {
		c.workers = defaultWorkers
	}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	var err error
	if c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"),
		watchcache.Handlers[*corev1.Pod]{Add: c.addPod, Update: c.updatePod, Remove: func(p *corev1.Pod) { c.podDeleted(p, true) }}); err != nil {
		return nil, err
	}
	controllers.IndexPodsByController(c.pods)
	if c.jobs, err = controllers.Shared(c.caches, batchv1.SchemeGroupVersion.WithResource("jobs"),
		watchcache.Handlers[*batchv1.Job]{Add: c.addJob, Update: c.updateJob, Remove: c.deleteJob}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run follows storage and syncs Jobs until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	controllers.RunWorkerPools(ctx, []<-chan struct{}{c.jobs.Synced(), c.pods.Synced()},
		controllers.WorkerPool{Queue: c.queue, Workers: c.workers, ProcessNext: c.processNext},
		controllers.WorkerPool{Queue: c.orphanQueue, Workers: c.workers, ProcessNext: c.processNextOrphan})
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
// warning; conflicts with a newer version are routine.
func syncErrorLevel(err error) slog.Level {
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

func key(namespace, name string) string { return namespace + "/" + name }

func jobKey(j *batchv1.Job) string { return key(j.Namespace, j.Name) }
