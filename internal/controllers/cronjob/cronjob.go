// Package cronjob is kube-controller-manager's CronJob controller
// (cronjob-controller), as upstream's pkg/controller/cronjob (the v2
// controller): at each start time of a CronJob's schedule (robfig/cron's
// standard syntax, in spec.timeZone) it creates a Job named
// "<cronjob>-<start time in minutes since the epoch>" from the job
// template, annotated with the start time and controlled by the
// CronJob; it honours suspend, startingDeadlineSeconds (a start missed
// by more is a MissSchedule warning) and concurrencyPolicy (Forbid skips
// a start while a Job runs, Replace deletes the running ones); it keeps
// status.active, lastScheduleTime and lastSuccessfulTime, deletes the
// oldest finished Jobs beyond the history limits, records upstream's
// events, and wakes each CronJob again at its next start time.
//
// As the other workload controllers it reads from storage through a
// watch and writes only as a client of the server, as its own service
// account, through admission. It does not run Jobs: that is the Job
// controller's work.
package cronjob

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name, Component the source of
// its events.
const (
	Name      = controllers.CronJobControllerName
	Component = "cronjob-controller"
	workers   = 5
)

// User is kube-controller-manager's cronjob-controller service account.
var User = controllers.ControllerUser("cronjob-controller")

var controllerKind = batchv1.SchemeGroupVersion.WithKind("CronJob")

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface
	Recorder  record.EventRecorder
	Log       *slog.Logger
	// Clock tells the time and wakes CronJobs at their start times; the
	// real clock if nil (tests step a fake one).
	Clock clock.WithTicker
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
}

// Controller starts CronJobs' Jobs.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	log       *slog.Logger
	clock     clock.WithTicker
	caches    *controllers.Caches
	ownCaches bool // caches are the controller's own, started by Run

	cronJobs *watchcache.Cache[*batchv1.CronJob]
	jobs     *watchcache.Cache[*batchv1.Job]
	queue    workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := &Controller{client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, clock: clk,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "cronjob", Clock: clk})}
	if c.caches = cfg.Caches; c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	var err error
	if c.cronJobs, err = controllers.Shared(c.caches, batchv1.SchemeGroupVersion.WithResource("cronjobs"),
		watchcache.Handlers[*batchv1.CronJob]{Add: c.enqueue, Update: c.updateCronJob, Remove: c.enqueue}); err != nil {
		return nil, err
	}
	if c.jobs, err = controllers.Shared(c.caches, batchv1.SchemeGroupVersion.WithResource("jobs"),
		watchcache.Handlers[*batchv1.Job]{Add: c.addJob, Update: c.updateJob, Remove: c.jobGone}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run follows storage and syncs CronJobs until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	controllers.RunWorkers(ctx, c.queue, []<-chan struct{}{c.cronJobs.Synced(), c.jobs.Synced()}, workers, c.processNext)
}

// processNext syncs one CronJob: an error retries it with backoff,
// success waits for its next start time.
func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	again, err := c.sync(ctx, key)
	switch {
	case err != nil && ctx.Err() == nil:
		c.log.Debug("syncing a cronjob will retry", "cronjob", key, "err", err)
		c.queue.AddRateLimited(key)
	case again != nil:
		c.queue.Forget(key)
		// The wait is counted from the clock as it is now, not as the sync
		// read it: a clock that moved meanwhile (a fake one stepped by a
		// test) would otherwise push the start time a whole wait later.
		c.queue.AddAfter(key, again.Sub(c.clock.Now()))
	default:
		c.queue.Forget(key)
	}
	return true
}

func (c *Controller) enqueue(cj *batchv1.CronJob) { c.queue.Add(cj.Namespace + "/" + cj.Name) }

// updateCronJob wakes a CronJob whose schedule or time zone changed at
// its next start time (an unparseable one is a warning and waits for
// the next change), any other at once.
func (c *Controller) updateCronJob(old, cur *batchv1.CronJob) {
	if old.Spec.Schedule == cur.Spec.Schedule && ptr.Equal(old.Spec.TimeZone, cur.Spec.TimeZone) {
		c.enqueue(cur)
		return
	}
	sched, err := ParseSchedule(ScheduleSpec(cur, nil))
	if err != nil {
		c.recorder.Eventf(cur, corev1.EventTypeWarning, "UnParseableCronJobSchedule", "unparseable schedule for cronjob: %s", cur.Spec.Schedule)
		return
	}
	c.queue.AddAfter(cur.Namespace+"/"+cur.Name, RequeueAfter(cur, c.clock.Now(), sched))
}

// owner is the CronJob that controls j, if it is still the same object.
func (c *Controller) owner(j *batchv1.Job) *batchv1.CronJob {
	return c.resolve(j.Namespace, metav1.GetControllerOfNoCopy(j))
}

func (c *Controller) resolve(namespace string, ref *metav1.OwnerReference) *batchv1.CronJob {
	if ref == nil || ref.Kind != controllerKind.Kind {
		return nil
	}
	cj, ok := c.cronJobs.Get(namespace, ref.Name)
	if !ok || cj.UID != ref.UID {
		return nil
	}
	return cj
}

func (c *Controller) addJob(j *batchv1.Job) {
	if cj := c.owner(j); cj != nil {
		c.enqueue(cj)
	}
}

func (c *Controller) updateJob(old, cur *batchv1.Job) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	oldRef, curRef := metav1.GetControllerOfNoCopy(old), metav1.GetControllerOfNoCopy(cur)
	if oldRef != nil && !reflect.DeepEqual(oldRef, curRef) {
		if cj := c.resolve(old.Namespace, oldRef); cj != nil {
			c.enqueue(cj)
		}
	}
	if cj := c.resolve(cur.Namespace, curRef); cj != nil {
		c.enqueue(cj)
	}
}

func (c *Controller) jobGone(j *batchv1.Job) {
	if cj := c.owner(j); cj != nil {
		c.enqueue(cj)
	}
}

// jobsOf are the Jobs cj controls.
func (c *Controller) jobsOf(cj *batchv1.CronJob) []*batchv1.Job {
	return c.jobs.List(cj.Namespace, func(j *batchv1.Job) bool {
		ref := metav1.GetControllerOfNoCopy(j)
		return ref != nil && ref.UID == cj.UID
	})
}

// now is the controller's time.
func (c *Controller) now() time.Time { return c.clock.Now() }
