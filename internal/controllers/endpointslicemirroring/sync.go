package endpointslicemirroring

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// staleCacheError: the slices cached are older than ones this controller
// has written; the sync is retried once the cache has caught up.
type staleCacheError struct{}

func (staleCacheError) Error() string { return "EndpointSlice informer cache is out of date" }

// sync mirrors the Endpoints at key into its slices, or deletes them when
// it is not to be mirrored (gone, skip-mirror, a leader lock, its Service
// gone or with a selector).
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	ep, ok := c.endpoints.Get(ns, name)
	if !ok || !shouldMirror(ep) {
		return c.deleteMirrored(ctx, ns, name)
	}
	svc, ok := c.services.Get(ns, name)
	if !ok || svc.Spec.Selector != nil {
		return c.deleteMirrored(ctx, ns, name)
	}
	slices := c.mirrored(ns, name)
	if c.tracker.StaleSlices(svc, slices) {
		return staleCacheError{}
	}
	m := Desired(ep, c.maxPerSubset)
	c.reportSkipped(ep, m)
	p := PlanSlices(ep, slices, m)
	for _, s := range p.Keep {
		if !c.tracker.Has(s) {
			c.tracker.Update(s)
		}
	}
	return c.write(ctx, ep, p)
}

// mirrored are the slices this controller keeps for the Endpoints
// ns/name.
func (c *Controller) mirrored(ns, name string) []*discovery.EndpointSlice {
	return c.slices.List(ns, func(s *discovery.EndpointSlice) bool {
		return s.Labels[discovery.LabelServiceName] == name && managed(s)
	})
}

// reportSkipped records the warnings of addresses left out of m.
func (c *Controller) reportSkipped(ep *corev1.Endpoints, m Mirror) {
	if m.Invalid > 0 {
		c.recorder.Eventf(ep, corev1.EventTypeWarning, "InvalidIPAddress",
			"Skipped %d invalid IP addresses when mirroring to EndpointSlices", m.Invalid)
	}
	if m.Skipped > m.Invalid {
		c.log.Info("addresses of an Endpoints past the per-subset limit were not mirrored", "endpoints", ep.Namespace+"/"+ep.Name, "skipped", m.Skipped)
		c.recorder.Eventf(ep, corev1.EventTypeWarning, "TooManyAddressesToMirror",
			"A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped", c.maxPerSubset, m.Skipped)
	}
}

// write carries p out: creates (none for an Endpoints being deleted, none
// once its namespace terminates), updates, then deletes.
func (c *Controller) write(ctx context.Context, ep *corev1.Endpoints, p Plan) error {
	client := c.client.DiscoveryV1().EndpointSlices(ep.Namespace)
	if ep.DeletionTimestamp == nil {
		for _, s := range p.Create {
			created, err := client.Create(ctx, s, metav1.CreateOptions{})
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("failed to create EndpointSlice for Endpoints %s/%s: %w", ep.Namespace, ep.Name, err)
			}
			c.tracker.Update(created)
		}
	}
	for _, s := range p.Update {
		updated, err := client.Update(ctx, s, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("failed to update %s EndpointSlice for Endpoints %s/%s: %w", s.Name, ep.Namespace, ep.Name, err)
		}
		c.tracker.Update(updated)
	}
	for _, s := range p.Delete {
		if err := client.Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete %s EndpointSlice for Endpoints %s/%s: %w", s.Name, ep.Namespace, ep.Name, err)
		}
		c.tracker.ExpectDeletion(s)
	}
	return nil
}

// deleteMirrored deletes the slices mirroring the Endpoints ns/name and
// forgets them.
func (c *Controller) deleteMirrored(ctx context.Context, ns, name string) error {
	c.tracker.DeleteService(ns, name)
	slices := c.mirrored(ns, name)
	var errs []error
	for _, s := range slices {
		err := c.client.DiscoveryV1().EndpointSlices(ns).Delete(ctx, s.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("error(s) deleting %d/%d EndpointSlices for %s/%s Endpoints, including: %w", len(errs), len(slices), ns, name, errs[0])
	}
	return nil
}
