// Package resourcequota is the ResourceQuota admission plugin: a create or
// update that would take a namespace's consumption over a ResourceQuota's
// hard limits is refused, and an admitted one is charged to the quotas'
// status.used before it is stored, so that concurrent requests cannot
// jointly overshoot.
//
// As upstream, requests of one namespace are evaluated in batches against a
// running copy of its quotas; the changed quotas' status is written through
// the API server with optimistic concurrency, and a conflict re-reads the
// quotas and evaluates the batch again (three retries). Quotas are read from
// the server's watch-fed cache; the copy this plugin last wrote stands in
// for an older cached one. What each resource consumes is package quota's.
// Dry-run requests are checked but charge nothing.
package resourcequota

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/quota"
)

// Name is the upstream plugin name.
const Name = "ResourceQuota"

var quotasResource = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}

// Register adds the plugin to r.
func Register(r *admission.Registry) {
	r.Register(Name, func(pc admission.PluginContext) (admission.Handler, error) {
		cfg, err := LoadConfiguration(pc.Config)
		if err != nil {
			return nil, err
		}
		if errs := Validate(cfg); len(errs) != 0 {
			return nil, errs.ToAggregate()
		}
		if pc.Cache == nil {
			return nil, fmt.Errorf("missing quotaAccessor.lister")
		}
		if pc.Status == nil {
			return nil, fmt.Errorf("missing quotaAccessor.client")
		}
		return New(pc.Cache, pc.Status, quota.NewRegistry(quota.OptionsFor(pc.Gates())), cfg), nil
	})
}

// Plugin is the ResourceQuota plugin.
type Plugin struct {
	registry *quota.Registry
	limited  []LimitedResource
	quotas   *quotaAccess
	batches  *batcher
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin reading quotas from cache and writing their status
// through status. A nil cfg is the empty configuration.
func New(cache admission.ObjectCache, status admission.StatusUpdater, reg *quota.Registry, cfg *Configuration) *Plugin {
	if cfg == nil {
		cfg = &Configuration{}
	}
	p := &Plugin{registry: reg, limited: cfg.LimitedResources, quotas: newQuotaAccess(cache, status)}
	p.batches = newBatcher(p.evaluateBatch)
	return p
}

// Handles CREATE and UPDATE.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate checks the request against the quotas of its namespace and
// charges it to them.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Namespace == "" || (a.Operation == admission.Create && a.Kind.Group == "" && a.Kind.Kind == "Namespace") {
		return nil
	}
	e := p.registry.For(a.Resource.GroupResource())
	if e == nil || !e.Handles(a) {
		return nil
	}
	if p.nothingToCharge(ctx, a.Namespace) {
		return nil
	}
	return p.batches.wait(ctx, a)
}

// nothingToCharge: no quota in ns and no resource that needs one. Its batch
// would decide the request as admitted (evaluateBatch reads the same
// cache), so the request does not wait for one.
func (p *Plugin) nothingToCharge(ctx context.Context, ns string) bool {
	if len(p.limited) != 0 {
		return false
	}
	objs, err := p.quotas.cache.ListCachedObjects(ctx, quotasResource, ns, nil)
	return err == nil && len(objs) == 0
}

// evaluateBatch decides the waiting requests of one namespace.
func (p *Plugin) evaluateBatch(ctx context.Context, ns string, ws []*waiter) {
	quotas, err := p.quotas.list(ctx, ns)
	if err != nil {
		for _, w := range ws {
			w.result = err
		}
		return
	}
	if len(quotas) == 0 && len(p.limited) == 0 {
		for _, w := range ws {
			w.result = nil
		}
		return
	}
	p.checkQuotas(ctx, quotas, ws, 3)
}

// checkQuotas evaluates the waiters in turn against a running copy of the
// quotas, writes the quotas whose usage changed and, when a write fails,
// retries the batch against fresh copies of the failed quotas.
func (p *Plugin) checkQuotas(ctx context.Context, quotas []corev1.ResourceQuota, ws []*waiter, retries int) {
	original := quotas
	changed := false
	for _, w := range ws {
		next, err := p.checkOne(quotas, w.attrs)
		if err != nil {
			w.result = err
			continue
		}
		if w.attrs.DryRun {
			w.result = nil
			continue
		}
		mine := false
		for j := range next {
			if !quota.Equal(quotas[j].Status.Used, next[j].Status.Used) {
				mine = true
				break
			}
		}
		if !mine {
			w.result = nil
		}
		changed = changed || mine
		quotas = next
	}
	if !changed {
		return
	}
	var failed []string
	var lastErr error
	for i := range quotas {
		if quota.Equal(original[i].Status.Used, quotas[i].Status.Used) {
			continue
		}
		if err := p.quotas.updateStatus(ctx, &quotas[i]); err != nil {
			failed = append(failed, quotas[i].Name)
			lastErr = err
		}
	}
	if len(failed) == 0 {
		settle(ws, nil)
		return
	}
	if retries <= 0 {
		settle(ws, lastErr)
		return
	}
	fresh, err := p.quotas.list(ctx, quotas[0].Namespace)
	if err != nil {
		settle(ws, lastErr)
		return
	}
	var again []corev1.ResourceQuota
	for _, q := range fresh {
		for _, name := range failed {
			if q.Name == name {
				again = append(again, q)
				break
			}
		}
	}
	p.checkQuotas(ctx, again, ws, retries-1)
}

func (p *Plugin) checkOne(quotas []corev1.ResourceQuota, a *admission.Attributes) ([]corev1.ResourceQuota, error) {
	e := p.registry.For(a.Resource.GroupResource())
	if e == nil {
		return quotas, nil
	}
	return checkRequest(quotas, a, e, p.limited)
}

// settle gives every waiter still undecided the result err.
func settle(ws []*waiter, err error) {
	for _, w := range ws {
		if w.result == errUndecided {
			w.result = err
		}
	}
}
