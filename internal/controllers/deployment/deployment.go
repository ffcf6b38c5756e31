// Package deployment is kube-controller-manager's Deployment controller
// (deployment-controller), as upstream's pkg/controller/deployment: each
// Deployment gets a ReplicaSet per pod template, named
// "<deployment>-<pod-template-hash>" with upstream's hash, labelled with
// the hash and annotated with its revision and the replica counts; a
// rolling update scales the new one up and the old ones down within
// maxSurge and maxUnavailable, a recreate scales the old ones to zero
// first; a scaling of a Deployment in the middle of a rollout is spread
// over its ReplicaSets in proportion; old ReplicaSets beyond
// revisionHistoryLimit are deleted; the status (replica counts,
// Available, Progressing with its deadline, ReplicaFailure from the
// ReplicaSets) and ScalingReplicaSet events are upstream's.
//
// As the ReplicaSet controller (internal/controllers/replicaset), it reads
// from storage through a watch and writes only as a client of the server,
// as its own service account, through admission.
package deployment

import (
	"context"
	"log/slog"
	"reflect"
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
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name, Component the source of
// its events; User is who its requests run as.
const (
	Name      = controllers.DeploymentControllerName
	Component = "deployment-controller"
	// maxRetries is how often a failing Deployment is retried before it
	// waits for its next change.
	maxRetries = 15
	workers    = 5
)

// User is kube-controller-manager's deployment-controller service account.
var User = controllers.ControllerUser("deployment-controller")

var controllerKind = appsv1.SchemeGroupVersion.WithKind("Deployment")

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

// Controller keeps Deployments' ReplicaSets.
type Controller struct {
	client    kubernetes.Interface
	recorder  record.EventRecorder
	log       *slog.Logger
	caches    *controllers.Caches
	ownCaches bool // caches are the controller's own, started by Run

	deployments *watchcache.Cache[*appsv1.Deployment]
	replicaSets *watchcache.Cache[*appsv1.ReplicaSet]
	pods        *watchcache.Cache[*corev1.Pod]
	queue       workqueue.TypedRateLimitingInterface[string]
	now         func() time.Time
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, now: time.Now,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "deployment"})}
	if c.caches = cfg.Caches; c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	var err error
	if c.deployments, err = controllers.Shared(c.caches, appsv1.SchemeGroupVersion.WithResource("deployments"),
		watchcache.Handlers[*appsv1.Deployment]{Add: c.enqueue, Update: func(_, cur *appsv1.Deployment) { c.enqueue(cur) }, Remove: c.enqueue}); err != nil {
		return nil, err
	}
	if c.replicaSets, err = controllers.Shared(c.caches, appsv1.SchemeGroupVersion.WithResource("replicasets"),
		watchcache.Handlers[*appsv1.ReplicaSet]{Add: c.addReplicaSet, Update: c.updateReplicaSet, Remove: c.deleteReplicaSet}); err != nil {
		return nil, err
	}
	if c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"),
		watchcache.Handlers[*corev1.Pod]{Add: func(*corev1.Pod) {}, Update: func(_, _ *corev1.Pod) {}, Remove: c.deletePod}); err != nil {
		return nil, err
	}
	controllers.IndexPodsByController(c.pods)
	return c, nil
}

// Run follows storage and syncs Deployments until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx) // shared caches are started by their maker
	}
	synced := []<-chan struct{}{c.deployments.Synced(), c.replicaSets.Synced(), c.pods.Synced()}
	controllers.RunWorkers(ctx, c.queue, synced, workers, c.processNext)
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	err := c.sync(ctx, key)
	switch {
	case err == nil || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) || ctx.Err() != nil:
		c.queue.Forget(key)
	case c.queue.NumRequeues(key) < maxRetries:
		c.log.Debug("syncing a deployment will retry", "deployment", key, "err", err)
		c.queue.AddRateLimited(key)
	default:
		c.log.Warn("syncing a deployment failed, dropped until it changes", "deployment", key, "err", err)
		c.queue.Forget(key)
	}
	return true
}

func (c *Controller) enqueue(d *appsv1.Deployment) { c.queue.Add(d.Namespace + "/" + d.Name) }

// resolveControllerRef is the Deployment ref names, if it is still the
// same object.
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *appsv1.Deployment {
	if ref.Kind != controllerKind.Kind {
		return nil
	}
	d, ok := c.deployments.Get(namespace, ref.Name)
	if !ok || d.UID != ref.UID {
		return nil
	}
	return d
}

// deploymentsMatching are the Deployments whose selector matches the
// ReplicaSet's labels (an empty selector matches nothing).
func (c *Controller) deploymentsMatching(rs *appsv1.ReplicaSet) []*appsv1.Deployment {
	if len(rs.Labels) == 0 {
		return nil
	}
	return c.deployments.List(rs.Namespace, func(d *appsv1.Deployment) bool {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		return err == nil && !sel.Empty() && sel.Matches(labels.Set(rs.Labels))
	})
}

func (c *Controller) addReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.DeletionTimestamp != nil {
		c.deleteReplicaSet(rs)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		if d := c.resolveControllerRef(rs.Namespace, ref); d != nil {
			c.enqueue(d)
		}
		return
	}
	for _, d := range c.deploymentsMatching(rs) {
		c.enqueue(d)
	}
}

func (c *Controller) updateReplicaSet(old, cur *appsv1.ReplicaSet) {
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if d := c.resolveControllerRef(old.Namespace, oldRef); d != nil {
			c.enqueue(d)
		}
	}
	if curRef != nil {
		if d := c.resolveControllerRef(cur.Namespace, curRef); d != nil {
			c.enqueue(d)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(cur.Labels, old.Labels) {
		for _, d := range c.deploymentsMatching(cur) {
			c.enqueue(d)
		}
	}
}

func (c *Controller) deleteReplicaSet(rs *appsv1.ReplicaSet) {
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		if d := c.resolveControllerRef(rs.Namespace, ref); d != nil {
			c.enqueue(d)
		}
	}
}

// deletePod queues the Recreate Deployment of a deleted pod: it may be
// waiting for its old pods to be gone.
func (c *Controller) deletePod(pod *corev1.Pod) {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return
	}
	rs, ok := c.replicaSets.Get(pod.Namespace, ref.Name)
	if !ok || rs.UID != ref.UID {
		return
	}
	dref := metav1.GetControllerOfNoCopy(rs)
	if dref == nil {
		return
	}
	if d := c.resolveControllerRef(rs.Namespace, dref); d != nil && d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		c.enqueue(d)
	}
}
