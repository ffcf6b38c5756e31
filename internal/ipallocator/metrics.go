package ipallocator

import (
	"context"
	"math"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	networkingv1 "k8s.io/api/networking/v1"
)

// Metrics are kube-apiserver's kube_apiserver_clusterip_allocator_*
// families, by ServiceCIDR range: the addresses allocated and free after
// each allocation and release, the allocations and failed ones, static
// (asked for) or dynamic, and how long a successful one took.
type Metrics struct {
	allocated, available *prometheus.GaugeVec
	allocations, errors  *prometheus.CounterVec
	latency              *prometheus.HistogramVec
}

// NewMetrics registers the families on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		allocated: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kube_apiserver_clusterip_allocator_allocated_ips",
			Help: "[ALPHA] Gauge measuring the number of allocated IPs for Services"}, []string{"cidr"}),
		available: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kube_apiserver_clusterip_allocator_available_ips",
			Help: "[ALPHA] Gauge measuring the number of available IPs for Services"}, []string{"cidr"}),
		allocations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kube_apiserver_clusterip_allocator_allocation_total",
			Help: "[ALPHA] Number of Cluster IPs allocations"}, []string{"cidr", "scope"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kube_apiserver_clusterip_allocator_allocation_errors_total",
			Help: "[ALPHA] Number of errors trying to allocate Cluster IPs"}, []string{"cidr", "scope"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kube_apiserver_clusterip_allocator_allocation_duration_seconds",
			Help: "[ALPHA] Duration in seconds to allocate a Cluster IP by ServiceCIDR", Buckets: prometheus.DefBuckets}, []string{"cidr"}),
	}
	reg.MustRegister(m.allocated, m.available, m.allocations, m.errors, m.latency)
	return m
}

// Allocation scopes, as upstream labels them.
const (
	scopeStatic  = "static"
	scopeDynamic = "dynamic"
)

// allocated counts an allocation from r that started at start, and r's
// addresses.
func (a *Allocator) allocated(ctx context.Context, r *cidrRange, scope string, start time.Time) {
	if a.metrics == nil {
		return
	}
	cidr := r.prefix.String()
	a.metrics.allocations.WithLabelValues(cidr, scope).Inc()
	a.metrics.latency.WithLabelValues(cidr).Observe(time.Since(start).Seconds())
	a.countAddresses(ctx, r)
}

// failed counts a failed allocation from r.
func (a *Allocator) failed(r *cidrRange, scope string) {
	if a.metrics != nil {
		a.metrics.errors.WithLabelValues(r.prefix.String(), scope).Inc()
	}
}

// countAddresses sets r's allocated and available addresses from the
// cache of IPAddresses, as upstream counts them from its informer.
func (a *Allocator) countAddresses(ctx context.Context, r *cidrRange) {
	if a.metrics == nil {
		return
	}
	objs, err := a.addresses.List(ctx, "", nil)
	if err != nil {
		return
	}
	used := uint64(0)
	for _, obj := range objs {
		ip, ok := obj.(*networkingv1.IPAddress)
		if !ok {
			continue
		}
		if addr, err := netip.ParseAddr(ip.Name); err == nil && r.contains(addr) {
			used++
		}
	}
	size := min(r.size, math.MaxInt64)
	cidr := r.prefix.String()
	a.metrics.allocated.WithLabelValues(cidr).Set(float64(used))
	a.metrics.available.WithLabelValues(cidr).Set(float64(size - min(used, size)))
}
