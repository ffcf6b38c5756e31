package controllers

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/quota"
	"github.com/admitd/admitd/pkg/storage"
)

// ResourceQuota is upstream's resource quota controller
// (pkg/controller/resourcequota): it keeps each ResourceQuota's
// status.hard equal to spec.hard and its status.used equal to what the
// namespace's stored objects consume (package quota's evaluators). A quota
// is recalculated when it is created or its hard limits change, when an
// object it counts is deleted or updated (a pod that finishes, a service
// that changes type: usage may fall), and every resync period. Creates are
// charged by the ResourceQuota admission plugin before they are stored, as
// upstream: recalculating on them could count a namespace before an
// admitted object reaches storage and let a later request overshoot.
type ResourceQuota struct {
	store    storage.Store
	cat      *registry.Catalogue
	quotas   *registry.Resource
	client   dynamic.Interface
	registry *quota.Registry
	resync   time.Duration
	log      *slog.Logger
	queue    workqueue.TypedRateLimitingInterface[string] // namespace/name of a quota

	// tracked is, per namespace and quota name, the resources the quota
	// counts. Only the watch goroutine touches it.
	tracked map[string]map[string][]schema.GroupResource
}

// ResourceQuotaUser is the user the controller's requests run as.
var ResourceQuotaUser = ControllerUser("resourcequota-controller")

// DefaultQuotaResync is kube-controller-manager's
// --resource-quota-sync-period.
const DefaultQuotaResync = 5 * time.Minute

var (
	quotasGVR    = corev1.SchemeGroupVersion.WithResource("resourcequotas")
	quotasPrefix = layout.GroupPrefix("") + "resourcequotas/"
)

// NewResourceQuota returns the controller; it recalculates every quota each
// resync (DefaultQuotaResync when 0) and writes status through client (as
// ResourceQuotaUser).
func NewResourceQuota(store storage.Store, cat *registry.Catalogue, client dynamic.Interface, opts quota.Options, resync time.Duration, log *slog.Logger) *ResourceQuota {
	if resync <= 0 {
		resync = DefaultQuotaResync
	}
	quotas, _ := cat.Lookup(quotasGVR)
	return &ResourceQuota{store: store, cat: cat, quotas: quotas, client: client, registry: quota.NewRegistry(opts), resync: resync, log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "resourcequota_primary"})}
}

// Run keeps the quotas' status until ctx ends.
func (c *ResourceQuota) Run(ctx context.Context) {
	go c.resyncEvery(ctx)
	runQueue(ctx, c.store, layout.Root, c, c.queue, c.sync, c.log, "recalculating a quota will retry", "quota")
}

// resyncEvery queues every quota each resync period.
func (c *ResourceQuota) resyncEvery(ctx context.Context) {
	t := time.NewTicker(c.resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			page, err := c.store.List(ctx, quotasPrefix, storage.ListOptions{})
			if err != nil {
				continue
			}
			for _, kv := range page.Items {
				c.queue.Add(strings.TrimPrefix(kv.Key, quotasPrefix))
			}
		}
	}
}

func (c *ResourceQuota) reset(items []storage.KeyValue) {
	c.tracked = map[string]map[string][]schema.GroupResource{}
	for _, kv := range items {
		if rest, ok := strings.CutPrefix(kv.Key, quotasPrefix); ok {
			c.quotaWritten(rest, kv, true)
		}
	}
}

// event follows the quotas, and queues those of a namespace when an object
// they count is deleted or updated.
func (c *ResourceQuota) event(ev storage.Event) {
	if rest, ok := strings.CutPrefix(ev.KV.Key, quotasPrefix); ok {
		if ev.Type == storage.EventPut {
			c.quotaWritten(rest, ev.KV, ev.PrevKV == nil)
		} else if ns, name, ok := strings.Cut(rest, "/"); ok {
			delete(c.tracked[ns], name)
		}
		return
	}
	if ev.Type == storage.EventPut && ev.PrevKV == nil {
		return
	}
	group, resource, ok := layout.KeyResource(ev.KV.Key)
	if !ok {
		return
	}
	rest := strings.TrimPrefix(ev.KV.Key, layout.GroupPrefix(group)+resource+"/")
	ns, _, namespaced := strings.Cut(rest, "/")
	if !namespaced {
		return
	}
	gr := schema.GroupResource{Group: group, Resource: resource}
	for name, grs := range c.tracked[ns] {
		for _, t := range grs {
			if t == gr {
				c.queue.Add(ns + "/" + name)
				break
			}
		}
	}
}

// quotaWritten records what the quota at key (namespace/name) counts and
// queues it when it is new, or its status lags its spec.
func (c *ResourceQuota) quotaWritten(key string, kv storage.KeyValue, created bool) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return
	}
	obj, err := layout.Decode(c.quotas, kv)
	if err != nil {
		return
	}
	q := obj.(*corev1.ResourceQuota)
	if c.tracked[ns] == nil {
		c.tracked[ns] = map[string][]schema.GroupResource{}
	}
	c.tracked[ns][name] = c.registry.Tracked(quota.Names(q.Spec.Hard))
	if created || !equality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard) || c.missingUsage(q) {
		c.queue.Add(key)
	}
}

// missingUsage reports whether the quota limits a resource the evaluators
// track without a used figure for it.
func (c *ResourceQuota) missingUsage(q *corev1.ResourceQuota) bool {
	for n := range q.Status.Hard {
		if _, ok := q.Status.Used[n]; ok {
			continue
		}
		if len(c.registry.Tracked([]corev1.ResourceName{n})) > 0 {
			return true
		}
	}
	return false
}

// sync recalculates the quota at key and writes its status when it
// changed, conditional on the version read (a conflict retries).
func (c *ResourceQuota) sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	kv, err := c.store.Get(ctx, layout.Key(c.quotas, ns, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	obj, err := layout.Decode(c.quotas, kv)
	if err != nil {
		return err
	}
	q := obj.(*corev1.ResourceQuota)
	status, changed, calcErr := c.recalculate(ctx, q)
	if changed {
		q.Status = status
		if err := c.writeStatus(ctx, q); err != nil {
			return err
		}
	}
	return calcErr
}

// recalculate returns q's new status: hard from spec, used from the stored
// objects for what the evaluators track (the figures of other names kept),
// and whether it differs from the current one.
func (c *ResourceQuota) recalculate(ctx context.Context, q *corev1.ResourceQuota) (corev1.ResourceQuotaStatus, bool, error) {
	hard := quota.Add(corev1.ResourceList{}, q.Spec.Hard)
	used := quota.Add(corev1.ResourceList{}, q.Status.Used)
	measured, err := c.registry.Usage(q, hard, func(gr schema.GroupResource, ns string) ([]runtime.Object, error) {
		return c.list(ctx, gr, ns)
	})
	for n, v := range measured {
		used[n] = v
	}
	used = quota.Mask(used, quota.Names(hard))
	changed := !equality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard) || q.Status.Hard == nil || q.Status.Used == nil ||
		!quota.Equal(used, q.Status.Used)
	return corev1.ResourceQuotaStatus{Hard: hard, Used: used}, changed, err
}

// list reads the stored objects of gr in namespace ns, decoded in their
// storage version; nothing for a resource not served.
func (c *ResourceQuota) list(ctx context.Context, gr schema.GroupResource, ns string) ([]runtime.Object, error) {
	res := c.storedResource(gr)
	if res == nil || !res.Namespaced {
		return nil, nil
	}
	page, err := c.store.List(ctx, layout.ListPrefix(res, ns), storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, 0, len(page.Items))
	for _, kv := range page.Items {
		obj, err := layout.Decode(res, kv)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// storedResource is the catalogue's resource gr in its storage version.
func (c *ResourceQuota) storedResource(gr schema.GroupResource) *registry.Resource {
	var fallback *registry.Resource
	for _, r := range c.cat.Resources() {
		if r.Group != gr.Group || r.Resource != gr.Resource {
			continue
		}
		if r.Version == r.StorageVersion {
			return r
		}
		fallback = r
	}
	return fallback
}

// writeStatus PUTs q's status, conditional on the version read.
func (c *ResourceQuota) writeStatus(ctx context.Context, q *corev1.ResourceQuota) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(q)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetAPIVersion("v1")
	u.SetKind("ResourceQuota")
	_, err = c.client.Resource(quotasGVR).Namespace(q.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
