package apiserver

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/storage"
)

var (
	validatingPoliciesGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies")
	validatingBindingsGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings")
	mutatingPoliciesGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies")
	mutatingBindingsGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings")
)

// policyResources are the resources whose writes change the snapshot.
var policyResources = []schema.GroupVersionResource{validatingPoliciesGVR, validatingBindingsGVR, mutatingPoliciesGVR, mutatingBindingsGVR}

// PolicyConfigs keeps the admission policies and bindings of storage as an
// immutable snapshot for the policy plugins. A write through this server
// reloads it before the write returns; a watch picks up writes made by other
// servers sharing the storage. Params are not cached: the plugins read them
// through a ParamLookup at each request.
type PolicyConfigs struct {
	store    storage.Store
	cat      *registry.Catalogue
	mu       sync.Mutex // serialises reloads
	current  atomic.Pointer[policies.Snapshot]
	revision int64
	status   *PolicyStatus
}

// WithStatus makes every reload that finds a policy whose status is
// behind its generation kick status.
func (c *PolicyConfigs) WithStatus(status *PolicyStatus) *PolicyConfigs {
	c.status = status
	return c
}

var _ policies.Source = (*PolicyConfigs)(nil)

// NewPolicyConfigs returns an empty cache; call Reload before serving.
func NewPolicyConfigs(store storage.Store, cat *registry.Catalogue) *PolicyConfigs {
	c := &PolicyConfigs{store: store, cat: cat}
	c.current.Store(&policies.Snapshot{})
	return c
}

// Current returns the latest snapshot.
func (c *PolicyConfigs) Current() *policies.Snapshot { return c.current.Load() }

// Reload reads every policy and binding and publishes a new snapshot.
func (c *PolicyConfigs) Reload(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	rev, err := c.store.Revision(ctx)
	if err != nil {
		return err
	}
	snap := &policies.Snapshot{}
	for _, gvr := range policyResources {
		res, ok := c.cat.Lookup(gvr)
		if !ok {
			continue
		}
		if err := eachStored(ctx, c.store, res, rev, func(obj any) { addToSnapshot(snap, obj) }); err != nil {
			return err
		}
	}
	c.current.Store(snap)
	c.revision = rev
	if c.status != nil && NeedsSync(snap) {
		c.status.Kick()
	}
	return nil
}

func addToSnapshot(snap *policies.Snapshot, obj any) {
	switch o := obj.(type) {
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		snap.ValidatingPolicies = append(snap.ValidatingPolicies, o)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		snap.ValidatingBindings = append(snap.ValidatingBindings, o)
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		snap.MutatingPolicies = append(snap.MutatingPolicies, o)
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		snap.MutatingBindings = append(snap.MutatingBindings, o)
	}
}

// Run reloads on every change made through any server until ctx ends.
func (c *PolicyConfigs) Run(ctx context.Context) {
	for ctx.Err() == nil {
		c.watch(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (c *PolicyConfigs) watch(ctx context.Context) {
	c.mu.Lock()
	from := c.revision
	c.mu.Unlock()
	w, err := c.store.Watch(ctx, "/registry/admissionregistration.k8s.io/", from)
	if err != nil {
		_ = c.Reload(ctx)
		return
	}
	defer w.Stop()
	for ev := range w.Events() {
		if isPolicyKey(ev.KV.Key) {
			_ = c.Reload(ctx)
		}
	}
}

func isPolicyKey(key string) bool {
	rest := strings.TrimPrefix(key, "/registry/admissionregistration.k8s.io/")
	for _, gvr := range policyResources {
		if strings.HasPrefix(rest, gvr.Resource+"/") {
			return true
		}
	}
	return false
}
