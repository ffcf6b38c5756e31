package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/admitd/admitd/internal/admissionsource"
	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/controllers"
	"github.com/admitd/admitd/internal/ipallocator"
	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// DefaultServiceClusterIPRange is kube-apiserver's default
// --service-cluster-ip-range.
const DefaultServiceClusterIPRange = "10.0.0.0/24"

// serviceRange is --service-cluster-ip-range: the CIDR of the default
// ServiceCIDR, its IP family, and the kubernetes Service's address (the
// range's first).
type serviceRange struct {
	cidr         string
	family       corev1.IPFamily
	kubernetesIP net.IP
}

func parseServiceRange(flag string) (serviceRange, error) {
	_, ipnet, err := net.ParseCIDR(flag)
	if err != nil {
		return serviceRange{}, fmt.Errorf("invalid service cluster IP range %q: %w", flag, err)
	}
	ones, bits := ipnet.Mask.Size()
	if bits-ones < 2 {
		return serviceRange{}, fmt.Errorf("service cluster IP range %q is too small", flag)
	}
	first := make(net.IP, len(ipnet.IP))
	copy(first, ipnet.IP)
	first[len(first)-1]++
	r := serviceRange{cidr: ipnet.String(), family: corev1.IPv4Protocol, kubernetesIP: first}
	if ipnet.IP.To4() == nil {
		r.family = corev1.IPv6Protocol
	}
	return r, nil
}

// clusterIPParts are the cluster IP allocator and what keeps its objects:
// the default ServiceCIDR controller and the repair loop, each with the
// health check of its kube-apiserver post-start hook.
type clusterIPParts struct {
	rng      serviceRange
	alloc    *ipallocator.Allocator
	services *registry.Resource
	cidr     *controllers.DefaultServiceCIDR // set by start
	repaired *startHook
}

// newClusterIPs is the allocator of --service-cluster-ip-range over store,
// reading ServiceCIDRs and IPAddresses through sources' caches, counting
// its allocations in metrics.
func newClusterIPs(o Options, store storage.Store, cat *registry.Catalogue, sources *admissionsource.Sources, metrics *ipallocator.Metrics) (*clusterIPParts, error) {
	rng, err := parseServiceRange(cmp.Or(o.ServiceClusterIPRange, DefaultServiceClusterIPRange))
	if err != nil {
		return nil, err
	}
	alloc, err := ipallocator.New(ipallocator.Config{Store: store, Catalogue: cat, Family: rng.family,
		ServiceCIDRs: sources.For(networkingv1.SchemeGroupVersion.WithResource("servicecidrs")),
		IPAddresses:  sources.For(networkingv1.SchemeGroupVersion.WithResource("ipaddresses")), Metrics: metrics})
	if err != nil {
		return nil, err
	}
	services, _ := cat.Lookup(corev1.SchemeGroupVersion.WithResource("services"))
	return &clusterIPParts{rng: rng, alloc: alloc, services: services, repaired: newStartHook()}, nil
}

// start syncs the default ServiceCIDR and repairs the IPAddresses once,
// before the server listens (a failure is logged: the loops of run retry
// and the health checks tell), writing as the API server through api.
func (c *clusterIPParts) start(ctx context.Context, api *apiserver.Server, log *slog.Logger) error {
	client, err := controllers.NewAPIServerClient(api.Loopback(apiserverUser))
	if err != nil {
		return err
	}
	c.cidr = controllers.NewDefaultServiceCIDR(client, []string{c.rng.cidr}, log.With("controller", controllers.DefaultServiceCIDRManager))
	if err := c.cidr.Sync(ctx); err != nil {
		log.Warn("creating the default ServiceCIDR, retrying", "err", err)
	}
	c.repair(ctx, log)
	return nil
}

// run keeps the default ServiceCIDR and repairs the IPAddresses every
// ipallocator.RepairInterval (every second until a repair has succeeded,
// as upstream's first run is retried), until ctx ends.
func (c *clusterIPParts) run(ctx context.Context, log *slog.Logger) {
	go c.cidr.Run(ctx)
	for {
		wait := ipallocator.RepairInterval
		if c.repaired.check(ctx) != nil {
			wait = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
			c.repair(ctx, log)
		}
	}
}

func (c *clusterIPParts) repair(ctx context.Context, log *slog.Logger) {
	if err := c.alloc.Repair(ctx, c.services, log.With("controller", "ipallocator-repair")); err != nil {
		if ctx.Err() == nil {
			log.Warn("repairing cluster IP addresses", "err", err)
		}
		return
	}
	c.repaired.finish()
}

// cidrSynced is the health check of the default ServiceCIDR.
func (c *clusterIPParts) cidrSynced(context.Context) error {
	if c.cidr == nil {
		return errHookNotFinished
	}
	select {
	case <-c.cidr.Synced():
		return nil
	default:
		return errHookNotFinished
	}
}

// startHook is the health check of work a kube-apiserver post-start hook
// does: "not finished" until finish.
type startHook struct {
	once sync.Once
	done chan struct{}
}

func newStartHook() *startHook { return &startHook{done: make(chan struct{})} }

func (h *startHook) finish() { h.once.Do(func() { close(h.done) }) }

func (h *startHook) check(context.Context) error {
	select {
	case <-h.done:
		return nil
	default:
		return errHookNotFinished
	}
}
