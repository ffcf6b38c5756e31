// Package ipallocator allocates Service cluster IPs as kube-apiserver 1.37
// does (pkg/registry/core/service/ipallocator, with the
// MultiCIDRServiceAllocator locked on): an address is allocated by
// creating the IPAddress object named by it, with the Service as its
// parent, in storage, and released by deleting that object. Storage
// refuses a second create of one name, so servers sharing a store agree on
// who holds an address by construction, with no state of their own. The
// addresses come from the ServiceCIDRs of the allocator's IP family that
// are ready; a watch-fed cache of the IPAddresses only tells dynamic
// allocation which addresses to skip.
//
// It is not the ServiceCIDR controllers (the default ServiceCIDR is kept by
// internal/controllers, kube-controller-manager's finalizer and Ready
// condition of every ServiceCIDR by internal/controllers/servicecidrs), and
// it allocates no node ports (internal/serviceip).
package ipallocator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage"
)

// The allocation errors, worded as upstream's.
var (
	// ErrFull: no ready ServiceCIDR of the family has a free address.
	ErrFull = errors.New("range is full")
	// ErrAllocated: an IPAddress of the requested address exists.
	ErrAllocated = errors.New("provided IP is already allocated")
	// ErrMismatchedNetwork: no ready ServiceCIDR holds the requested
	// address.
	ErrMismatchedNetwork = errors.New("the provided network does not match the current range")
)

// NotInRangeError is what a dry run says of an address outside the range
// it checks.
type NotInRangeError struct {
	IP         net.IP
	ValidRange string
}

func (e *NotInRangeError) Error() string {
	return fmt.Sprintf("the provided IP (%v) is not in the valid range. The range of valid IPs is %s", e.IP, e.ValidRange)
}

// Cache is how the allocator reads ServiceCIDRs and IPAddresses: a
// watch-fed copy of one resource's objects (admissionsource.Cache) that
// it tells of its own writes.
type Cache interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
	List(ctx context.Context, namespace string, sel labels.Selector) ([]runtime.Object, error)
	Observe(ctx context.Context, version string, deleted bool, obj runtime.Object)
}

// Config is what an Allocator works with.
type Config struct {
	Store     storage.Store
	Catalogue *registry.Catalogue
	// Family is the IP family allocated (that of kube-apiserver's
	// --service-cluster-ip-range).
	Family corev1.IPFamily
	// ServiceCIDRs and IPAddresses are caches of networking.k8s.io/v1
	// servicecidrs and ipaddresses over Store.
	ServiceCIDRs, IPAddresses Cache
	// Now defaults to time.Now.
	Now func() time.Time
	// Metrics, when set, count the allocations (dry runs are not).
	Metrics *Metrics
}

// Allocator allocates the cluster IPs of one IP family. Safe for
// concurrent use.
type Allocator struct {
	store     storage.Store
	ips       *registry.Resource
	family    corev1.IPFamily
	cidrs     Cache
	addresses Cache
	now       func() time.Time
	metrics   *Metrics

	mu     sync.Mutex
	rng    *rand.Rand
	ranges map[string]*cidrRange // parsed CIDRs; nil for one without a range
}

// New returns the allocator of cfg.
func New(cfg Config) (*Allocator, error) {
	ips, ok := cfg.Catalogue.Lookup(networkingv1.SchemeGroupVersion.WithResource("ipaddresses"))
	if !ok {
		return nil, errors.New("ipaddresses are not served")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Allocator{store: cfg.Store, ips: ips, family: cfg.Family, cidrs: cfg.ServiceCIDRs, addresses: cfg.IPAddresses,
		now: cfg.Now, metrics: cfg.Metrics, rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())), ranges: map[string]*cidrRange{}}, nil
}

// Family is the IP family the allocator allocates.
func (a *Allocator) Family() corev1.IPFamily { return a.family }

// servedRange is a range of a ServiceCIDR.
type servedRange struct {
	*cidrRange
	cidrName string
	ready    bool
}

// served are the ranges of the family's ServiceCIDRs, by ServiceCIDR
// name. A ServiceCIDR is ready unless its Ready condition is not True or
// it is being deleted.
func (a *Allocator) served(ctx context.Context) ([]servedRange, error) {
	objs, err := a.cidrs.List(ctx, "", nil)
	if err != nil {
		return nil, err
	}
	var out []servedRange
	for _, obj := range objs {
		sc, ok := obj.(*networkingv1.ServiceCIDR)
		if !ok {
			continue
		}
		ready := sc.DeletionTimestamp == nil
		if c := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady); c != nil && c.Status != metav1.ConditionTrue {
			ready = false
		}
		for _, cidr := range sc.Spec.CIDRs {
			if r := a.rangeOf(cidr); r != nil && r.family() == a.family {
				out = append(out, servedRange{cidrRange: r, cidrName: sc.Name, ready: ready})
			}
		}
	}
	return out, nil
}

// rangeOf is the parsed range of cidr, nil for a CIDR without one.
func (a *Allocator) rangeOf(cidr string) *cidrRange {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.ranges[cidr]
	if !ok {
		r, _ = newRange(cidr)
		a.ranges[cidr] = r
	}
	return r
}

// Allocate gives ip to svc: ErrMismatchedNetwork when no ready
// ServiceCIDR holds it, ErrAllocated when an IPAddress of it exists.
func (a *Allocator) Allocate(ctx context.Context, svc *corev1.Service, ip net.IP) error {
	addr, ok := addrOf(ip)
	if !ok {
		return ErrMismatchedNetwork
	}
	ranges, err := a.served(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ranges, func(r servedRange) bool { return r.ready && r.contains(addr) })
	if i < 0 {
		return ErrMismatchedNetwork
	}
	start := time.Now()
	if err := a.create(ctx, newIPAddress(addr.String(), a.family, svc, a.timestamp())); err != nil {
		a.failed(ranges[i].cidrRange, scopeStatic)
		return err
	}
	a.allocated(ctx, ranges[i].cidrRange, scopeStatic, start)
	return nil
}

// AllocateNext gives svc a free address of a ready ServiceCIDR (tried in
// random order, as upstream's map of allocators): from a random address
// of its upper part on, then of its lower part, skipping the addresses the
// cache knows taken; an address another server took meanwhile is skipped
// too. ErrFull when none is free.
func (a *Allocator) AllocateNext(ctx context.Context, svc *corev1.Service) (net.IP, error) {
	ranges, err := a.served(ctx)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.rng.Shuffle(len(ranges), func(i, j int) { ranges[i], ranges[j] = ranges[j], ranges[i] })
	seed := a.rng.Uint64()
	a.mu.Unlock()
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	now, start := a.timestamp(), time.Now()
	for _, r := range ranges {
		if !r.ready {
			continue
		}
		for addr := range r.candidates(rng) {
			name := addr.String()
			if _, err := a.addresses.Get(ctx, "", name); err == nil {
				continue
			}
			err := a.create(ctx, newIPAddress(name, a.family, svc, now))
			if errors.Is(err, ErrAllocated) {
				continue
			}
			if err != nil {
				a.failed(r.cidrRange, scopeDynamic)
				return nil, err
			}
			a.allocated(ctx, r.cidrRange, scopeDynamic, start)
			return net.IP(addr.AsSlice()), nil
		}
		a.failed(r.cidrRange, scopeDynamic) // full
	}
	return nil, ErrFull
}

// Release deletes the IPAddress of ip, if there is one, whatever its
// ServiceCIDR (upstream leaves one outside every ServiceCIDR to its repair
// loop).
func (a *Allocator) Release(ctx context.Context, ip net.IP) error {
	addr, ok := addrOf(ip)
	if !ok {
		return nil
	}
	if err := a.remove(ctx, addr.String()); err != nil {
		return err
	}
	a.releasedFrom(ctx, addr)
	return nil
}

// releasedFrom recounts the addresses of the ranges holding addr.
func (a *Allocator) releasedFrom(ctx context.Context, addr netip.Addr) {
	if a.metrics == nil {
		return
	}
	ranges, err := a.served(ctx)
	if err != nil {
		return
	}
	for _, r := range ranges {
		if r.contains(addr) {
			a.countAddresses(ctx, r.cidrRange)
		}
	}
}

// dryRunRange is the range a dry run checks, as upstream's dry-run
// allocator, which is one ServiceCIDR's: the default "kubernetes" one if
// it serves the family, else the first by name. Readiness does not
// matter.
func (a *Allocator) dryRunRange(ctx context.Context) (*cidrRange, error) {
	ranges, err := a.served(ctx)
	if err != nil {
		return nil, err
	}
	if len(ranges) == 0 {
		return nil, ErrMismatchedNetwork
	}
	for _, r := range ranges {
		if r.cidrName == DefaultServiceCIDRName {
			return r.cidrRange, nil
		}
	}
	return ranges[0].cidrRange, nil
}

// CheckDryRun is what a dry-run create checks of an address it asks for:
// that it is within the range (a *NotInRangeError), not whether it is
// free, as upstream's.
func (a *Allocator) CheckDryRun(ctx context.Context, ip net.IP) error {
	r, err := a.dryRunRange(ctx)
	if err != nil {
		return err
	}
	if addr, ok := addrOf(ip); !ok || !r.contains(addr) {
		return &NotInRangeError{IP: ip, ValidRange: r.prefix.String()}
	}
	return nil
}

// DryRunNext is the address a dry-run create without one shows: the
// network address of the range, as upstream's.
func (a *Allocator) DryRunNext(ctx context.Context) (net.IP, error) {
	r, err := a.dryRunRange(ctx)
	if err != nil {
		return nil, ErrFull
	}
	return net.IP(r.prefix.Addr().AsSlice()), nil
}

// Contains reports whether a ServiceCIDR, ready or not, holds ip.
func (a *Allocator) Contains(ctx context.Context, ip netip.Addr) (bool, error) {
	ranges, err := a.served(ctx)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(ranges, func(r servedRange) bool { return r.contains(ip) }), nil
}

func (a *Allocator) timestamp() metav1.Time {
	return metav1.NewTime(a.now().Truncate(time.Second))
}

// DefaultServiceCIDRName is the ServiceCIDR kube-apiserver keeps for its
// --service-cluster-ip-range.
const DefaultServiceCIDRName = "kubernetes"
