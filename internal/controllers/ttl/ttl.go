// Package ttl is kube-controller-manager's TTL controller (ttl-controller),
// as upstream's pkg/controller/ttl: every Node carries the annotation
// node.alpha.kubernetes.io/ttl, the seconds a kubelet may cache the
// secrets and config maps its pods use, set by the cluster's size (0 up to
// 100 nodes, then 15, 30, 60 and 300 s, with upstream's overlapping
// boundaries, so that a cluster near one does not flap). The size steps
// as Nodes come and go; each Node is brought to the current value when it
// is added or changes. It reads Nodes from storage through a watch and
// patches as its own service account, through admission.
package ttl

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/controllers/watchcache"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// Name is the controller's --controllers name.
const Name = "ttl-controller"

// User is kube-controller-manager's ttl-controller service account.
var User = controllers.ControllerUser("ttl-controller")

// defaultWorkers is kube-controller-manager's --concurrent-ttl-syncs.
const defaultWorkers = 5

// boundary is one step of the TTL by cluster size: ttlSeconds while the
// node count stays within [sizeMin, sizeMax].
type boundary struct{ sizeMin, sizeMax, ttlSeconds int }

// boundaries are upstream's steps; each overlaps the next, so a count
// must cross a step's far edge to change it.
var boundaries = []boundary{
	{sizeMin: 0, sizeMax: 100, ttlSeconds: 0},
	{sizeMin: 90, sizeMax: 500, ttlSeconds: 15},
	{sizeMin: 450, sizeMax: 1000, ttlSeconds: 30},
	{sizeMin: 900, sizeMax: 2000, ttlSeconds: 60},
	{sizeMin: 1800, sizeMax: math.MaxInt32, ttlSeconds: 300},
}

// Config is what the controller needs.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	Client    kubernetes.Interface // patches as User
	Log       *slog.Logger
	// Caches are the watch caches the controller shares with the
	// others of the process, started by their maker once every reader
	// is made (Caches.Start); nil means its own, started by Run.
	Caches *controllers.Caches
}

// Controller keeps the Nodes' TTL annotation.
type Controller struct {
	caches    *controllers.Caches
	ownCaches bool
	client    kubernetes.Interface
	log       *slog.Logger
	nodes     *watchcache.Cache[*corev1.Node]
	queue     workqueue.TypedRateLimitingInterface[string]

	mu   sync.RWMutex
	size sizeStep
}

// sizeStep follows the node count and the boundary it is at.
type sizeStep struct{ count, step int }

// added counts a Node in, stepping up past the boundary's top.
func (s *sizeStep) added() {
	s.count++
	if s.step+1 < len(boundaries) && s.count > boundaries[s.step].sizeMax {
		s.step++
	}
}

// removed counts a Node out, stepping down below the boundary's bottom.
func (s *sizeStep) removed() {
	s.count--
	if s.step > 0 && s.count < boundaries[s.step].sizeMin {
		s.step--
	}
}

// New returns the controller.
func New(cfg Config) (*Controller, error) {
	c := &Controller{caches: cfg.Caches, client: cfg.Client, log: cfg.Log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "ttlcontroller"})}
	if c.caches == nil {
		c.caches = controllers.NewCaches(cfg.Store, cfg.Catalogue, cfg.Log)
		c.ownCaches = true
	}
	var err error
	c.nodes, err = controllers.Shared(c.caches, corev1.SchemeGroupVersion.WithResource("nodes"), watchcache.Handlers[*corev1.Node]{
		Add:    func(n *corev1.Node) { c.resize((*sizeStep).added); c.queue.Add(n.Name) },
		Update: func(_, n *corev1.Node) { c.queue.Add(n.Name) },
		Remove: func(*corev1.Node) { c.resize((*sizeStep).removed) }})
	return c, err
}

func (c *Controller) resize(change func(*sizeStep)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	change(&c.size)
}

// desiredTTL is the TTL of the cluster's current size.
func (c *Controller) desiredTTL() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return boundaries[c.size.step].ttlSeconds
}

// Run follows storage and patches Nodes until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if c.ownCaches {
		c.caches.Start(ctx)
	}
	controllers.RunWorkers(ctx, c.queue, []<-chan struct{}{c.nodes.Synced()}, defaultWorkers, c.processNext)
}

func (c *Controller) processNext(ctx context.Context) bool {
	return controllers.ProcessNext(ctx, c.queue, c.sync, c.log, "setting a node's TTL will retry", "node")
}

// sync patches the Node's annotation when it is not the desired TTL (a
// value that is not a number counts as none).
func (c *Controller) sync(ctx context.Context, name string) error {
	node, ok := c.nodes.Get("", name)
	if !ok {
		return nil
	}
	want := c.desiredTTL()
	if cur, err := strconv.Atoi(node.Annotations[corev1.ObjectTTLAnnotationKey]); err == nil && cur == want {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, corev1.ObjectTTLAnnotationKey, strconv.Itoa(want))
	_, err := c.client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}
