// Package ephemeral is kube-controller-manager's ephemeral volume
// controller (ephemeral-volume-controller), as upstream's
// pkg/controller/volume/ephemeral: for each generic ephemeral volume of a
// pod it creates the PersistentVolumeClaim "<pod>-<volume>" from the
// volume's claim template (its labels, annotations and spec), controlled
// by the pod, so that the garbage collector deletes it with the pod. A
// claim of that name the pod does not control is an error, reported by a
// FailedBinding event on the pod and retried; a pod marked for deletion is
// left alone. When a claim is deleted, the pods that use it are synced
// again. It reads pods and claims from storage through watches and
// creates as its own service account, through admission.
package ephemeral

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/utils/ptr"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "ephemeral-volume-controller"

// Component is the source of its events.
const Component = "ephemeral_volume"

// User is kube-controller-manager's ephemeral-volume-controller service
// account.
var User = controllers.ControllerUser("ephemeral-volume-controller")

// defaultWorkers is --concurrent-ephemeralvolume-syncs.
const defaultWorkers = 5

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // creates as User
	Recorder  record.EventRecorder
	Log       *slog.Logger
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
	// Metrics count the claim creates (nil: not counted).
	Metrics *Metrics
}

// Controller creates the claims of pods' ephemeral volumes.
type Controller struct {
	caches    *controllers.Caches
	ownCaches bool
	client    kubernetes.Interface
	recorder  record.EventRecorder
	log       *slog.Logger
	pods      *watchcache.Cache[*corev1.Pod]
	claims    *watchcache.Cache[*corev1.PersistentVolumeClaim]
	queue     workqueue.TypedRateLimitingInterface[string]
	metrics   *Metrics
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{caches: cfg.Caches, client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, metrics: cfg.Metrics,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "ephemeral_volume"})}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	var err error
	// as upstream's, a pod is looked at when it is added (its volumes
	// cannot change) and when one of its claims goes
	if c.pods, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("pods"),
		watchcache.Handlers[*corev1.Pod]{Add: c.enqueue}); err != nil {
		return nil, err
	}
	controllers.IndexPodsByClaim(c.pods)
	c.claims, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
		watchcache.Handlers[*corev1.PersistentVolumeClaim]{Remove: c.claimDeleted})
	return c, err
}

// Run follows storage and creates claims until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx)
	}
	controllers.RunWorkers(ctx, c.queue, []<-chan struct{}{c.pods.Synced(), c.claims.Synced()}, defaultWorkers, c.processNext)
}

// enqueue queues a pod with an ephemeral volume that is not being deleted.
func (c *Controller) enqueue(pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		return
	}
	for _, vol := range pod.Spec.Volumes {
		if vol.Ephemeral != nil {
			c.queue.Add(pod.Namespace + "/" + pod.Name)
			return
		}
	}
}

// claimDeleted queues the pods that use a deleted claim: one waiting for
// its ephemeral claim's namesake to go creates it now.
func (c *Controller) claimDeleted(claim *corev1.PersistentVolumeClaim) {
	for _, pod := range controllers.PodsUsingClaim(c.pods, claim.Namespace, claim.Name) {
		c.enqueue(pod)
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	return controllers.ProcessNext(ctx, c.queue, c.sync, c.log, "creating ephemeral volume claims will retry", "pod")
}

// sync creates the missing claims of the pod at key, volume by volume; the
// first that fails stops it, with an event on the pod.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	pod, ok := c.pods.Get(ns, name)
	if !ok || pod.DeletionTimestamp != nil {
		return nil
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if err := c.ensureClaim(ctx, pod, vol); err != nil {
			c.recorder.Event(pod, corev1.EventTypeWarning, "FailedBinding", fmt.Sprintf("ephemeral volume %s: %v", vol.Name, err))
			return fmt.Errorf("pod %s, ephemeral volume %s: %v", key, vol.Name, err)
		}
	}
	return nil
}

// ensureClaim creates the claim of vol, an ephemeral volume of pod, unless
// the pod's claim exists; a claim of its name that is not the pod's is an
// error.
func (c *Controller) ensureClaim(ctx context.Context, pod *corev1.Pod, vol *corev1.Volume) error {
	if vol.Ephemeral == nil {
		return nil
	}
	name := ephemeral.VolumeClaimName(pod, vol)
	if claim, ok := c.claims.Get(pod.Namespace, name); ok {
		return ephemeral.VolumeIsForPod(pod, claim)
	}
	tmpl := vol.Ephemeral.VolumeClaimTemplate
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		Annotations: tmpl.Annotations, Labels: tmpl.Labels}, Spec: tmpl.Spec}
	_, err := c.client.CoreV1().PersistentVolumeClaims(pod.Namespace).Create(ctx, claim, metav1.CreateOptions{})
	c.metrics.created(err)
	if err != nil {
		return fmt.Errorf("create PVC %s: %v", name, err)
	}
	return nil
}
