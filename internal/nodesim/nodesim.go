// Package nodesim runs simulated nodes inside the server, kwok's idea built
// in: for every Node annotated kwok.x-k8s.io/node=fake (the ones the
// --simulated-nodes flag registers, and any a user creates so), a
// simulated kubelet posts the node's status and renews its Lease, runs the
// pods bound to it (Running and Ready at once; Succeeded after the time
// kwok's pod-complete annotation gives; deleted once their grace period
// has passed), and a scheduler binds pending pods to those nodes, filtering
// as kube-scheduler's default plugins do.
//
// Everything it writes goes through the API server as the component that
// writes it on a real cluster: a node's status, Lease, pod statuses and
// pod deletions as system:node:<name> (so the Node authorizer and
// NodeRestriction check them), bindings and scheduling conditions as
// system:kube-scheduler, and the removal of a ready node's not-ready taint
// as kube-controller-manager's node-controller. It reads the cluster from
// storage, as the server's own controllers do.
//
// It is not a kubelet: no containers, probes, volumes or restarts; nor a
// scheduler beyond the filters named in Filter: no preemption, pod
// affinity, topology spread or volume binding, and it binds only to
// simulated nodes.
package nodesim

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// AnnotationNode marks a Node as simulated when its value is
// AnnotationNodeValue: kwok's own marker, so Node manifests written for
// kwok run unchanged.
const (
	AnnotationNode      = "kwok.x-k8s.io/node"
	AnnotationNodeValue = "fake"
)

// AnnotationPodComplete is kwok's pod-complete stage annotation: a Go
// duration ("30s", "5m") after which a running pod whose restartPolicy is
// not Always succeeds. A pod a Job controls succeeds after
// DefaultJobPodRunTime without it, as kwok's stage.
const AnnotationPodComplete = "pod-complete.stage.kwok.x-k8s.io/delay"

// DefaultJobPodRunTime is how long a Job's pod runs without the annotation.
const DefaultJobPodRunTime = time.Second

// NodeName is the name of the i-th node the simulator registers: node-0,
// node-1, ... (kwokctl's stem, without its zero padding, so they read
// well in kubectl's output).
func NodeName(i int) string { return fmt.Sprintf("node-%d", i) }

// DefaultSchedulerName is the scheduler whose pods the simulator binds.
const DefaultSchedulerName = corev1.DefaultSchedulerName

// Config configures a Simulator.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	// Loopback returns the API server's in-process transport for a user.
	Loopback func(authenticationv1.UserInfo) http.RoundTripper
	// Nodes is how many nodes to register at start (NodeName(0) ...).
	Nodes int
	// LeaseRenewInterval is how often a node's Lease is renewed; default
	// 10s (the kubelet's: a quarter of its 40s lease duration).
	LeaseRenewInterval time.Duration
	// StatusReportInterval is how often an unchanged node status is
	// posted again; default 5m (the kubelet's nodeStatusReportFrequency).
	StatusReportInterval time.Duration
	Log                  *slog.Logger
}

// Simulator is the simulated kubelets and scheduler.
type Simulator struct {
	cfg        Config
	scheduler  kubernetes.Interface
	controller kubernetes.Interface
	log        *slog.Logger
	// registered is done once the configured nodes are registered
	// (RegisterNodes, or Run).
	registered sync.Once
	// sharedCaches: ShareCaches has been called.
	sharedCaches bool

	mu    sync.Mutex
	nodes map[string]*simNode // simulated nodes by name
	// nodeOrder are the names of nodes, sorted; nil when one came or went.
	nodeOrder []string
	pods      map[string]*corev1.Pod // every pod by namespace/name
	// assumed are pods this scheduler bound that storage does not yet show
	// bound, with their node.
	assumed       map[string]string
	unschedulable map[string]bool
	podIPs        podIPs
	indexes       map[string]int // node name -> index (addresses)
	// counted are the pods the scheduler counts on a node, by key, and
	// accounts what they take of each node, kept as pods are bound,
	// assumed, finish and go (recount).
	counted  map[string]countedPod
	accounts accounts

	nodeQueue  workqueue.TypedRateLimitingInterface[string]
	podQueue   workqueue.TypedRateLimitingInterface[string]
	schedQueue workqueue.TypedRateLimitingInterface[string]
}

// simNode is a simulated node: its latest Node, index and client.
type simNode struct {
	node         *corev1.Node
	index        int
	client       kubernetes.Interface
	lastReported time.Time // guarded by Simulator.mu

	leaseMu sync.Mutex
	lease   *coordinationv1.Lease // the last one written

}

// User is the user a node's kubelet authenticates as.
func User(node string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
}

// SchedulerUser is kube-scheduler's user.
var SchedulerUser = authenticationv1.UserInfo{Username: "system:kube-scheduler", Groups: []string{"system:authenticated"}}

// NodeControllerUser is kube-controller-manager's node-controller, with
// --use-service-account-credentials.
var NodeControllerUser = authenticationv1.UserInfo{
	Username: "system:serviceaccount:kube-system:node-controller",
	Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"},
}

// New returns a simulator; Run starts it.
func New(cfg Config) (*Simulator, error) {
	if cfg.LeaseRenewInterval <= 0 {
		cfg.LeaseRenewInterval = 10 * time.Second
	}
	if cfg.StatusReportInterval <= 0 {
		cfg.StatusReportInterval = 5 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	_, ok := cfg.Catalogue.Lookup(corev1.SchemeGroupVersion.WithResource("nodes"))
	_, ok2 := cfg.Catalogue.Lookup(corev1.SchemeGroupVersion.WithResource("pods"))
	if !ok || !ok2 {
		return nil, fmt.Errorf("the catalogue serves no v1 nodes or pods")
	}
	s := &Simulator{cfg: cfg, log: cfg.Log,
		nodes: map[string]*simNode{}, pods: map[string]*corev1.Pod{}, assumed: map[string]string{},
		unschedulable: map[string]bool{}, podIPs: newPodIPs(), indexes: map[string]int{},
		counted: map[string]countedPod{}, accounts: accounts{},
		nodeQueue:  newQueue(),
		podQueue:   newQueue(),
		schedQueue: newQueue(),
	}
	for i := range cfg.Nodes {
		s.indexes[NodeName(i)] = i
	}
	var err error
	if s.scheduler, err = s.client(SchedulerUser, "kube-scheduler/"+kubeletVersion); err != nil {
		return nil, err
	}
	if s.controller, err = s.client(NodeControllerUser, "kube-controller-manager/"+kubeletVersion); err != nil {
		return nil, err
	}
	return s, nil
}

func newQueue() workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
}

// client is a typed client of the server through the loopback as user,
// sending agent as its User-Agent (which names the field manager of its
// writes: kubelet, kube-scheduler, kube-controller-manager).
func (s *Simulator) client(user authenticationv1.UserInfo, agent string) (kubernetes.Interface, error) {
	agent += " (linux/amd64) kubernetes/admitd"
	cfg := &rest.Config{Host: "http://loopback", QPS: -1, UserAgent: agent}
	rt := transport.NewUserAgentRoundTripper(agent, s.cfg.Loopback(user))
	return kubernetes.NewForConfigAndClient(cfg, &http.Client{Transport: rt})
}

// RegisterNodes registers the Config.Nodes nodes, once: Run does it when
// it has not been done, and a caller does it first to have the nodes
// before it goes on (admitd serve before it reports serving).
func (s *Simulator) RegisterNodes(ctx context.Context) {
	s.registered.Do(func() {
		for i := range s.cfg.Nodes {
			if err := s.register(ctx, NodeName(i)); err != nil && ctx.Err() == nil {
				s.log.Error("registering a simulated node", "node", NodeName(i), "err", err)
			}
		}
	})
}

// ShareCaches has the simulator follow nodes and pods in caches shared
// with the controllers, whose maker starts them; without it Run follows
// them in caches of its own. Call it before Run.
func (s *Simulator) ShareCaches(caches *controllers.Caches) error {
	if _, err := controllers.Shared(caches, corev1.SchemeGroupVersion.WithResource("nodes"), s.nodeHandlers()); err != nil {
		return err
	}
	if _, err := controllers.Shared(caches, corev1.SchemeGroupVersion.WithResource("pods"), s.podHandlers()); err != nil {
		return err
	}
	s.sharedCaches = true
	return nil
}

// Run registers the configured nodes (unless RegisterNodes did) and
// simulates until ctx ends.
func (s *Simulator) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		s.nodeQueue.ShutDown()
		s.podQueue.ShutDown()
		s.schedQueue.ShutDown()
	}()
	s.RegisterNodes(ctx)
	if !s.sharedCaches {
		own := controllers.NewCaches(s.cfg.Store, s.cfg.Catalogue, s.log)
		if err := s.ShareCaches(own); err != nil {
			s.log.Error("following nodes and pods", "err", err)
			return
		}
		own.Start(ctx)
	}
	go s.heartbeats(ctx)
	go work(ctx, s.nodeQueue, s.syncNode, s.log, "node")
	go work(ctx, s.podQueue, s.syncPod, s.log, "pod")
	go work(ctx, s.podQueue, s.syncPod, s.log, "pod")
	work(ctx, s.schedQueue, s.schedule, s.log, "pod")
}

// work syncs the keys of queue until it shuts down; a failed sync is
// retried rate-limited.
func work(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) error, log *slog.Logger, keyName string) {
	for {
		key, quit := queue.Get()
		if quit {
			return
		}
		if err := sync(ctx, key); err != nil && ctx.Err() == nil {
			log.Debug("simulated node work will retry", keyName, key, "err", err)
			queue.AddRateLimited(key)
		} else {
			queue.Forget(key)
		}
		queue.Done(key)
	}
}
