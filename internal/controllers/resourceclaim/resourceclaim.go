// Package resourceclaim is kube-controller-manager's resource claim
// controller (resourceclaim-controller) of Dynamic Resource Allocation, as
// upstream's pkg/controller/resourceclaim: for each claim of a pod made
// from a ResourceClaimTemplate it creates a ResourceClaim from the
// template (generateName "<pod>-<claim>-", controlled by the pod,
// annotated with the pod's claim name) and records its name in the pod's
// status.resourceClaimStatuses (a server-side apply of pods/status); it
// reserves an allocated claim for a pod already bound to a node; it drops
// from a claim's status.reservedFor the pods that are gone or will not run
// again, deallocating a claim left unreserved (and then removing its
// delete-protection finalizer); and it deletes a generated claim, once
// unreserved, whose pod is done or replaced. A claim it cannot create is
// reported by a FailedResourceClaimCreation event on the pod and retried.
// It reads pods, claims and templates from storage through watches and
// writes as its own service account, through admission.
//
// Not here: upstream's PodGroup claims (DRAWorkloadResourceClaims and
// GenericWorkload are off by default in 1.37 and admitd has no PodGroup
// controller); a pod that names a PodGroup is handled as one that does
// not, as upstream does with those gates off. Claims of extended
// resources (status.extendedResourceClaimStatus, created by the
// scheduler) are cleaned up as upstream does.
package resourceclaim

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "resourceclaim-controller"

// Component is the source of its events.
const Component = "resource_claim"

// FieldManager is the manager of the pod status entries it applies.
const FieldManager = "ResourceClaimController"

// User is kube-controller-manager's resource-claim-controller service
// account (bootstrap RBAC's system:controller:resource-claim-controller).
var User = controllers.ControllerUser("resource-claim-controller")

// defaultWorkers is --concurrent-resourceclaim-syncs' default.
const defaultWorkers = 50

// Queue keys are a kind prefix and namespace/name, as upstream's.
const (
	podKeyPrefix   = "pod:"
	claimKeyPrefix = "claim:"
)

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // writes as User
	Recorder  record.EventRecorder
	Log       *slog.Logger
	// Caches are the watch caches the controller shares with the others
	// of the process, started by their maker once every reader is made;
	// nil means its own, started by Run.
	Caches *controllers.Caches
	// Metrics count the claim creates and the claims (nil: not counted).
	Metrics *Metrics
	// PrioritizedListOff is the DRAPrioritizedList gate turned off: a
	// template with a prioritized list of subrequests is then refused.
	// Default false (the gate is on by default in 1.37).
	PrioritizedListOff bool
}

// Controller creates the claims of pods' claim templates and releases
// claims whose pods are done.
type Controller struct {
	caches             *controllers.Caches
	ownCaches          bool
	client             kubernetes.Interface
	recorder           record.EventRecorder
	log                *slog.Logger
	metrics            *Metrics
	prioritizedListOff bool

	pods      *watchcache.Cache[*corev1.Pod]
	claims    *watchcache.Cache[*resourcev1.ResourceClaim]
	templates *watchcache.Cache[*resourcev1.ResourceClaimTemplate]
	queue     workqueue.TypedRateLimitingInterface[string]

	// created are the claims this controller created that its cache may
	// not have yet, so that a retry does not create a second one.
	created *createdClaims
	// deleted are the UIDs of pods seen deleted: their reservations go
	// without asking the server whether they exist.
	deleted *uidSet
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{caches: cfg.Caches, client: cfg.Client, recorder: cfg.Recorder, log: cfg.Log, metrics: cfg.Metrics,
		prioritizedListOff: cfg.PrioritizedListOff, created: newCreatedClaims(), deleted: newUIDSet(maxDeletedUIDs),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "resource_claim"})}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	if err := c.addCaches(); err != nil {
		return nil, err
	}
	if c.metrics != nil {
		c.metrics.source.Store(c)
	}
	return c, nil
}

// addCaches makes the controller's readers of pods, claims and templates,
// with their indexes and handlers. Each one's handlers read the others,
// so they must not be called before all are made: the caches are started
// after every reader is made, as Caches asks.
func (c *Controller) addCaches() error {
	var err error
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	if c.pods, err = controllers.Shared(c.caches, pods, watchcache.Handlers[*corev1.Pod]{
		Add:    func(pod *corev1.Pod) { c.enqueuePod(pod, false) },
		Update: func(_, pod *corev1.Pod) { c.enqueuePod(pod, false) },
		Remove: func(pod *corev1.Pod) { c.enqueuePod(pod, true) },
	}); err != nil {
		return err
	}
	c.pods.AddIndex(podClaimIndex, podClaimKeys)
	c.pods.AddIndex(podTemplateIndex, podTemplateKeys)
	claims := resourcev1.SchemeGroupVersion.WithResource("resourceclaims")
	if c.claims, err = controllers.Shared(c.caches, claims, watchcache.Handlers[*resourcev1.ResourceClaim]{
		Add:    func(claim *resourcev1.ResourceClaim) { c.enqueueClaim(claim, false) },
		Update: func(_, claim *resourcev1.ResourceClaim) { c.enqueueClaim(claim, false) },
		Remove: func(claim *resourcev1.ResourceClaim) { c.enqueueClaim(claim, true) },
	}); err != nil {
		return err
	}
	c.claims.AddIndex(claimOwnerIndex, claimOwnerKeys)
	templates := resourcev1.SchemeGroupVersion.WithResource("resourceclaimtemplates")
	c.templates, err = controllers.Shared(c.caches, templates, watchcache.Handlers[*resourcev1.ResourceClaimTemplate]{
		Add:    c.enqueueTemplate,
		Update: func(_, t *resourcev1.ResourceClaimTemplate) { c.enqueueTemplate(t) },
	})
	return err
}

// Run follows storage and syncs pods and claims until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx)
	}
	synced := []<-chan struct{}{c.pods.Synced(), c.claims.Synced(), c.templates.Synced()}
	controllers.RunWorkers(ctx, c.queue, synced, defaultWorkers, c.processNext)
}

func (c *Controller) processNext(ctx context.Context) bool {
	return controllers.ProcessNext(ctx, c.queue, c.sync, c.log, "syncing resource claims will retry", "key")
}

// sync syncs the pod or claim a queue key names.
func (c *Controller) sync(ctx context.Context, key string) error {
	kind, nsName, ok := strings.Cut(key, ":")
	if !ok {
		return fmt.Errorf("unexpected key: %s", key)
	}
	ns, name, _ := strings.Cut(nsName, "/")
	switch kind + ":" {
	case podKeyPrefix:
		return c.syncPod(ctx, ns, name)
	case claimKeyPrefix:
		return c.syncClaim(ctx, ns, name)
	}
	return fmt.Errorf("unexpected key prefix: %s:", kind)
}
