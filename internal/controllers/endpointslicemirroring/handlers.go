package endpointslicemirroring

import (
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// shouldMirror: ep is neither labelled skip-mirror nor a leader lock.
func shouldMirror(ep *corev1.Endpoints) bool {
	if ep == nil || ep.Labels[discovery.LabelSkipMirror] == "true" {
		return false
	}
	_, lock := ep.Annotations[leaderElectionAnnotation]
	return !lock
}

func (c *Controller) enqueue(namespace, name string) { c.queue.Add(namespace + "/" + name) }

// queueMirroredEndpoints queues an Endpoints added or deleted that is
// mirrored.
func (c *Controller) queueMirroredEndpoints(ep *corev1.Endpoints) {
	if shouldMirror(ep) {
		c.enqueue(ep.Namespace, ep.Name)
	}
}

// endpointsUpdated queues an Endpoints that is or was mirrored.
func (c *Controller) endpointsUpdated(old, cur *corev1.Endpoints) {
	if shouldMirror(old) || shouldMirror(cur) {
		c.enqueue(cur.Namespace, cur.Name)
	}
}

// queueSelectorlessService queues the Endpoints of a selector-less Service
// added or deleted.
func (c *Controller) queueSelectorlessService(svc *corev1.Service) {
	if svc.Spec.Selector == nil {
		c.enqueue(svc.Namespace, svc.Name)
	}
}

// serviceUpdated queues the Endpoints of a Service that gained or lost
// its selector.
func (c *Controller) serviceUpdated(old, cur *corev1.Service) {
	if (old.Spec.Selector == nil) != (cur.Spec.Selector == nil) {
		c.enqueue(cur.Namespace, cur.Name)
	}
}

func managed(s *discovery.EndpointSlice) bool { return s.Labels[discovery.LabelManagedBy] == ManagedBy }

// sliceAdded queues the Endpoints of a mirrored slice, unless the slice is
// one this controller wrote and has already seen.
func (c *Controller) sliceAdded(s *discovery.EndpointSlice) {
	if managed(s) && c.tracker.ShouldSync(s) {
		c.queueSliceEndpoints(s)
	}
}

func (c *Controller) sliceUpdated(old, cur *discovery.EndpointSlice) {
	if old.Labels[discovery.LabelServiceName] != cur.Labels[discovery.LabelServiceName] {
		c.queueSliceEndpoints(cur)
		c.queueSliceEndpoints(old)
		return
	}
	if managed(old) != managed(cur) || (managed(cur) && c.tracker.ShouldSync(cur)) {
		c.queueSliceEndpoints(cur)
	}
}

// sliceDeleted queues the Endpoints of a mirrored slice deleted by someone
// else than this controller.
func (c *Controller) sliceDeleted(s *discovery.EndpointSlice) {
	if managed(s) && c.tracker.Has(s) && !c.tracker.HandleDeletion(s) {
		c.queueSliceEndpoints(s)
	}
}

func (c *Controller) queueSliceEndpoints(s *discovery.EndpointSlice) {
	name := s.Labels[discovery.LabelServiceName]
	if name == "" {
		c.log.Debug("EndpointSlice without a service-name label", "slice", s.Namespace+"/"+s.Name)
		return
	}
	c.queue.AddAfter(s.Namespace+"/"+name, c.batchPeriod)
}
