package endpointslice

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/admitd/admitd/internal/controllers"
)

var labelsEverything = labels.Everything()

// staleCacheError: the slices cached are older than ones this controller
// has written; the sync is retried once the cache has caught up.
type staleCacheError struct{}

func (staleCacheError) Error() string { return "EndpointSlice informer cache is out of date" }

// sync makes the EndpointSlices of the Service at key those of the pods
// its selector matches; a Service gone has its trackers forgotten (its
// slices go with it through their ownerReference).
func (c *Controller) sync(_ context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	svc, ok := c.services.Get(ns, name)
	if !ok {
		c.triggerTime.DeleteService(ns, name)
		c.reconciler.DeleteService(ns, name)
		c.sliceTrack.DeleteService(ns, name)
		return nil
	}
	pods, selects := controllers.SelectedPods(svc, c.pods)
	if !selects {
		return nil
	}
	slices := c.slices.List(ns, func(s *discovery.EndpointSlice) bool {
		return s.Labels[discovery.LabelServiceName] == name && s.Labels[discovery.LabelManagedBy] == ManagedBy && s.DeletionTimestamp == nil
	})
	if c.sliceTrack.StaleSlices(svc, slices) {
		return staleCacheError{}
	}
	trigger := c.triggerTime.ComputeEndpointLastChangeTriggerTime(ns, svc, pods)
	if err := c.reconciler.Reconcile(c.logger, svc, pods, slices, trigger); err != nil {
		c.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToUpdateEndpointSlices",
			"Error updating Endpoint Slices for Service %s/%s: %v", ns, name, err)
		return err
	}
	return nil
}

func (c *Controller) enqueueService(svc *corev1.Service) { c.queue.Add(svc.Namespace + "/" + svc.Name) }

// sliceAdded queues the Service of a slice this controller manages, unless
// the slice is one it wrote and has already seen.
func (c *Controller) sliceAdded(s *discovery.EndpointSlice) {
	if c.reconciler.ManagedByController(s) && c.sliceTrack.ShouldSync(s) {
		c.queueSliceService(s)
	}
}

func (c *Controller) sliceUpdated(old, cur *discovery.EndpointSlice) {
	if old.Labels[discovery.LabelServiceName] != cur.Labels[discovery.LabelServiceName] {
		c.queueSliceService(cur)
		c.queueSliceService(old)
		return
	}
	if c.reconciler.ManagedByChanged(old, cur) || (c.reconciler.ManagedByController(cur) && c.sliceTrack.ShouldSync(cur)) {
		c.queueSliceService(cur)
	}
}

// sliceDeleted queues the Service of a managed slice deleted by someone
// else than this controller.
func (c *Controller) sliceDeleted(s *discovery.EndpointSlice) {
	if c.reconciler.ManagedByController(s) && c.sliceTrack.Has(s) && !c.sliceTrack.HandleDeletion(s) {
		c.queueSliceService(s)
	}
}

func (c *Controller) queueSliceService(s *discovery.EndpointSlice) {
	name := s.Labels[discovery.LabelServiceName]
	if name == "" {
		c.log.Debug("EndpointSlice without a service-name label", "slice", s.Namespace+"/"+s.Name)
		return
	}
	c.queue.AddAfter(s.Namespace+"/"+name, max(sliceChangeDelay, c.batchPeriod))
}
