package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/internal/storage/bolt"
	"github.com/admitd/admitd/internal/storage/etcd"
	"github.com/admitd/admitd/pkg/storage"
)

// DefaultStorageCheckTimeout is kube-apiserver's --etcd-healthcheck-timeout
// and --etcd-readycheck-timeout default.
const DefaultStorageCheckTimeout = 2 * time.Second

// storageProbe is what a store offers the health checks: nil when it has
// nothing to check (the memory store).
type storageProbe func(context.Context) error

// probeOf is the health probe of a store as opened: an etcd read, or the
// bolt file being open.
func probeOf(store storage.Store) storageProbe {
	switch s := store.(type) {
	case *etcd.Store:
		return s.Health
	case *bolt.Store:
		return s.Health
	}
	return nil
}

// errNotProbed is a check's answer before its first probe has returned, as
// upstream's before its etcd client exists.
var errNotProbed = errors.New("etcd client connection not yet established")

// storageCheck is kube-apiserver's etcd check around a probe: each probe is
// bounded by timeout, at most one starts per half timeout, and a check
// asked in between gets the last answer.
type storageCheck struct {
	probe   storageProbe
	timeout time.Duration
	now     func() time.Time

	mu      sync.Mutex
	started time.Time // of the last probe
	last    error     // the answer of the latest probe to return
	lastAt  time.Time // when that probe started
}

// newStorageCheck returns the check of probe, nil when there is no probe.
func newStorageCheck(probe storageProbe, timeout time.Duration) func(context.Context) error {
	if probe == nil {
		return nil
	}
	if timeout <= 0 {
		timeout = DefaultStorageCheckTimeout
	}
	c := &storageCheck{probe: probe, timeout: timeout, now: time.Now, last: errNotProbed}
	return c.check
}

// check probes unless a probe started within the last half timeout. The
// probe runs apart from the request's context, as upstream's: a client
// that goes away does not record a failure.
func (c *storageCheck) check(context.Context) error {
	c.mu.Lock()
	start := c.now()
	if !c.started.IsZero() && start.Sub(c.started) < c.timeout/2 {
		defer c.mu.Unlock()
		return c.last
	}
	c.started = start
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	err := c.probe(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastAt.Before(start) || c.lastAt.IsZero() {
		c.last, c.lastAt = err, start
	}
	return err
}

// errHookNotFinished is the reason of a post-start hook's failed check,
// upstream's.
var errHookNotFinished = errors.New("not finished")

// startChecks are the health checks named after kube-apiserver 1.37.2's
// post-start hooks whose work admitd does too, in upstream's order. The
// work of most is done before the server listens (the admission chain
// and its sources, definitions of custom resources, system namespaces,
// bootstrap RBAC policy, priority classes and flow-control objects; the
// identity lease and legacy token tracking controllers start), so
// they pass from the first request on; the cluster IP repair and the
// default ServiceCIDR pass once they have succeeded (they are tried
// before the server listens, and again until they do). The flow-control
// ones are listed when API Priority and Fairness is on, the identity
// lease ones with APIServerIdentity, as upstream's. The
// aggregator's follow (informers, the Local APIServices' availability set
// at their creation, the remote availability, proxy and discovery
// controllers, autoregistration), with autoregister-completion failing
// until every built-in APIService is Available, and the OpenAPI v2 and v3
// merges.
func startChecks(flowControl, identity bool, ips *clusterIPParts, autoRegistered func(context.Context) error) []apiserver.HealthCheck {
	var checks []apiserver.HealthCheck
	pass := func(context.Context) error { return nil }
	hook := func(name string, check func(context.Context) error) {
		checks = append(checks, apiserver.HealthCheck{Name: "poststarthook/" + name, Check: check})
	}
	add := func(name string, when bool) {
		if when {
			hook(name, pass)
		}
	}
	add("start-apiserver-admission-initializer", true)
	add("generic-apiserver-start-informers", true)
	add("priority-and-fairness-config-consumer", flowControl)
	add("priority-and-fairness-filter", flowControl)
	add("storage-object-count-tracker-hook", true)
	add("start-apiextensions-informers", true)
	add("start-apiextensions-controllers", true)
	add("crd-informer-synced", true)
	add("start-system-namespaces-controller", true)
	add("start-cluster-authentication-info-controller", true)
	add("start-kube-apiserver-identity-lease-controller", identity)
	add("start-kube-apiserver-identity-lease-garbage-collector", identity)
	add("start-legacy-token-tracking-controller", true)
	hook("start-service-ip-repair-controllers", ips.repaired.check)
	add("rbac/bootstrap-roles", true)
	add("scheduling/bootstrap-system-priority-classes", true)
	add("priority-and-fairness-config-producer", flowControl)
	add("bootstrap-controller", true)
	hook("start-kubernetes-service-cidr-controller", ips.cidrSynced)
	for _, name := range []string{"start-kube-aggregator-informers", "apiservice-status-local-available-controller",
		"apiservice-status-remote-available-controller", "apiservice-registration-controller", "apiservice-discovery-controller",
		"kube-apiserver-autoregistration"} {
		add(name, true)
	}
	checks = append(checks, apiserver.HealthCheck{Name: "autoregister-completion", Check: autoRegistered})
	add("apiservice-openapi-controller", true)
	add("apiservice-openapiv3-controller", true)
	return checks
}
