package endpoints

import (
	"context"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	endpointslicerec "k8s.io/endpointslice"
	endpointsliceutil "k8s.io/endpointslice/util"

	"github.com/admitd/admitd/internal/controllers"
)

// staleCacheError: the cached Endpoints is one this controller has
// already replaced; the sync is retried once the cache has caught up.
type staleCacheError struct{ key, version string }

func (e staleCacheError) Error() string {
	return "endpoints informer cache is out of date, resource version " + e.version + " already processed for endpoints " + e.key
}

// sync makes the Endpoints of the Service at key list the addresses of
// the pods its selector matches; the Endpoints of a Service gone are
// deleted.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name := splitKey(key)
	svc, ok := c.services.Get(ns, name)
	if !ok {
		err := c.client.CoreV1().Endpoints(ns).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		c.triggerTime.DeleteService(ns, name)
		c.stale.forget(ns, name)
		return nil
	}
	pods, selects := controllers.SelectedPods(svc, c.pods)
	if !selects {
		return nil
	}
	trigger := c.triggerTime.ComputeEndpointLastChangeTriggerTime(ns, svc, pods)
	subsets := ServiceSubsets(svc, pods)

	current, exists := c.endpoints.Get(ns, name)
	if !exists {
		current = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: svc.Labels}}
	} else if c.stale.isStale(current) {
		return staleCacheError{key: key, version: current.ResourceVersion}
	}
	if exists && (subsetsEqual(current.Subsets, subsets) || subsetsEqual(RepackSubsets(current.Subsets), subsets)) &&
		labelsCorrect(current.Labels, svc.Labels) && capacityAnnotationCorrect(current.Annotations, current.Subsets) {
		return nil
	}
	desired := DesiredEndpoints(current, svc, subsets, trigger)
	return c.write(ctx, svc, current, desired, !exists)
}

// DesiredEndpoints is current with subsets, svc's labels plus the
// controller's, and the trigger-time and over-capacity annotations.
func DesiredEndpoints(current *corev1.Endpoints, svc *corev1.Service, subsets []corev1.EndpointSubset, trigger time.Time) *corev1.Endpoints {
	ep := current.DeepCopy()
	ep.Subsets = subsets
	ep.Labels = maps.Clone(svc.Labels)
	if ep.Annotations == nil {
		ep.Annotations = map[string]string{}
	}
	if trigger.IsZero() {
		delete(ep.Annotations, corev1.EndpointsLastChangeTriggerTime)
	} else {
		ep.Annotations[corev1.EndpointsLastChangeTriggerTime] = trigger.UTC().Format(time.RFC3339Nano)
	}
	if truncate(ep) {
		ep.Annotations[corev1.EndpointsOverCapacity] = overCapacityValue
	} else {
		delete(ep.Annotations, corev1.EndpointsOverCapacity)
	}
	if ep.Labels == nil {
		ep.Labels = map[string]string{}
	}
	if serviceIPSet(svc) {
		delete(ep.Labels, corev1.IsHeadlessService)
	} else {
		ep.Labels[corev1.IsHeadlessService] = ""
	}
	ep.Labels[LabelManagedBy] = Component
	return ep
}

// write creates or updates the Endpoints, recording a warning event when
// the server refuses.
func (c *Controller) write(ctx context.Context, svc *corev1.Service, current, desired *corev1.Endpoints, create bool) error {
	client := c.client.CoreV1().Endpoints(svc.Namespace)
	var updated *corev1.Endpoints
	var err error
	if create {
		_, err = client.Create(ctx, desired, metav1.CreateOptions{})
	} else {
		updated, err = client.Update(ctx, desired, metav1.UpdateOptions{})
	}
	if err != nil {
		if create && apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		if create {
			c.recorder.Eventf(desired, corev1.EventTypeWarning, "FailedToCreateEndpoint", "Failed to create endpoint for service %v/%v: %v", svc.Namespace, svc.Name, err)
		} else {
			c.recorder.Eventf(desired, corev1.EventTypeWarning, "FailedToUpdateEndpoint", "Failed to update endpoint %v/%v: %v", svc.Namespace, svc.Name, err)
		}
		return err
	}
	if updated != nil && updated.ResourceVersion != current.ResourceVersion {
		c.stale.replaced(current)
	}
	return nil
}

// ServiceSubsets are the repacked subsets of svc's Endpoints for pods:
// each pod that belongs in them (an IP, not terminal; not terminating
// unless svc publishes not-ready addresses) on each Service port its
// containers resolve, or with no ports for a headless Service without
// ports.
func ServiceSubsets(svc *corev1.Service, pods []*corev1.Pod) []corev1.EndpointSubset {
	subsets := []corev1.EndpointSubset{}
	for _, pod := range pods {
		if !endpointsliceutil.ShouldPodBeInEndpoints(pod, svc.Spec.PublishNotReadyAddresses) {
			continue
		}
		addr, err := PodAddress(svc, pod)
		if err != nil {
			continue
		}
		if endpointsliceutil.ShouldSetHostname(pod, svc) {
			addr.Hostname = pod.Spec.Hostname
		}
		ready := svc.Spec.PublishNotReadyAddresses || endpointsliceutil.IsPodReady(pod)
		if len(svc.Spec.Ports) == 0 {
			if svc.Spec.ClusterIP == corev1.ClusterIPNone {
				subsets = append(subsets, subset(addr, nil, ready))
			}
			continue
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			port, err := endpointslicerec.FindPort(pod, sp)
			if err != nil {
				continue
			}
			subsets = append(subsets, subset(addr, &corev1.EndpointPort{Name: sp.Name, Port: int32(port), Protocol: sp.Protocol, AppProtocol: sp.AppProtocol}, ready))
		}
	}
	return RepackSubsets(subsets)
}

func subset(addr corev1.EndpointAddress, port *corev1.EndpointPort, ready bool) corev1.EndpointSubset {
	s := corev1.EndpointSubset{Ports: []corev1.EndpointPort{}}
	if port != nil {
		s.Ports = append(s.Ports, *port)
	}
	if ready {
		s.Addresses = []corev1.EndpointAddress{addr}
	} else {
		s.NotReadyAddresses = []corev1.EndpointAddress{addr}
	}
	return s
}

// serviceIPSet: the Service has a cluster IP (it is not headless).
func serviceIPSet(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP != corev1.ClusterIPNone && svc.Spec.ClusterIP != ""
}

// labelsCorrect: the Endpoints carry the managed-by label and exactly the
// Service's labels besides it and the headless label.
func labelsCorrect(epLabels, svcLabels map[string]string) bool {
	if epLabels[LabelManagedBy] != Component {
		return false
	}
	own := 0
	for k, v := range epLabels {
		if k == corev1.IsHeadlessService || k == LabelManagedBy {
			own++
		} else if sv, ok := svcLabels[k]; !ok || sv != v {
			return false
		}
	}
	return len(svcLabels) == len(epLabels)-own
}

// capacityAnnotationCorrect: within capacity and not annotated over it.
func capacityAnnotationCorrect(annotations map[string]string, subsets []corev1.EndpointSubset) bool {
	n := 0
	for _, s := range subsets {
		n += len(s.Addresses) + len(s.NotReadyAddresses)
	}
	if n > maxCapacity {
		return false
	}
	_, annotated := annotations[corev1.EndpointsOverCapacity]
	return !annotated
}
