package resourceclaim

import (
	"context"
	"fmt"
	"slices"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// syncClaim drops from the claim namespace/name the reservations of pods
// that are gone or will not run again; a claim so left unreserved is
// deallocated and loses its delete-protection finalizer, as does a
// deleted one no longer reserved. An unreserved claim generated for a pod
// that is done or replaced is deleted.
func (c *Controller) syncClaim(ctx context.Context, ns, name string) error {
	claim, ok := c.claims.Get(ns, name)
	if !ok {
		return nil
	}
	remaining, err := c.validReservations(ctx, claim)
	if err != nil {
		return err
	}
	if err := c.release(ctx, claim, remaining); err != nil {
		return err
	}
	if len(remaining) > 0 {
		return nil
	}
	return c.deleteIfUnused(ctx, claim)
}

// validReservations are claim's reservations but those of pods known
// deleted, gone from the server, replaced by a namesake or done. Other
// consumers than pods are kept: the controller does not know them.
func (c *Controller) validReservations(ctx context.Context, claim *resourcev1.ResourceClaim) ([]resourcev1.ResourceClaimConsumerReference, error) {
	remaining := make([]resourcev1.ResourceClaimConsumerReference, 0, len(claim.Status.ReservedFor))
	for _, r := range claim.Status.ReservedFor {
		if r.APIGroup != "" || r.Resource != "pods" {
			remaining = append(remaining, r)
			continue
		}
		keep, err := c.podReservationValid(ctx, claim.Namespace, r)
		if err != nil {
			return nil, err
		}
		if keep {
			remaining = append(remaining, r)
		}
	}
	return remaining, nil
}

// podReservationValid reports whether the pod r reserves the claim for
// (in namespace ns) may still use it. A pod not cached may be one the
// cache has not seen yet: only the server can say it is gone.
func (c *Controller) podReservationValid(ctx context.Context, ns string, r resourcev1.ResourceClaimConsumerReference) (bool, error) {
	if c.deleted.has(r.UID) {
		return false, nil
	}
	pod, ok := c.pods.Get(ns, r.Name)
	if ok {
		return pod.UID == r.UID && !podDone(pod), nil
	}
	pod, err := c.client.CoreV1().Pods(ns).Get(ctx, r.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return pod.UID == r.UID, nil
}

// release writes claim's reservations when some are gone, clearing its
// allocation when none remain and the claim has the finalizer the
// scheduler's allocation adds, then removes that finalizer from a claim
// left unallocated; a deleted claim no longer reserved is deallocated and
// loses the finalizer too, so that it goes.
func (c *Controller) release(ctx context.Context, claim *resourcev1.ResourceClaim, remaining []resourcev1.ResourceClaimConsumerReference) error {
	protected := slices.Contains(claim.Finalizers, resourcev1.Finalizer)
	claims := c.client.ResourceV1().ResourceClaims(claim.Namespace)
	switch {
	case len(remaining) < len(claim.Status.ReservedFor):
		// an update, not a patch: it must fail when the claim changed
		claim = claim.DeepCopy()
		claim.Status.ReservedFor = remaining
		if len(remaining) == 0 && protected {
			claim.Status.Allocation = nil
		}
		updated, err := claims.UpdateStatus(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		if !slices.Contains(updated.Finalizers, resourcev1.Finalizer) || updated.Status.Allocation != nil {
			return nil
		}
		return c.removeFinalizer(ctx, updated)
	case protected && claim.DeletionTimestamp != nil && len(remaining) == 0:
		claim = claim.DeepCopy()
		if claim.Status.Allocation != nil {
			claim.Status.Allocation = nil
			var err error
			if claim, err = claims.UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		return c.removeFinalizer(ctx, claim)
	}
	return nil
}

// removeFinalizer removes the delete-protection finalizer from claim, a
// copy, by an update.
func (c *Controller) removeFinalizer(ctx context.Context, claim *resourcev1.ResourceClaim) error {
	claim.Finalizers = slices.DeleteFunc(claim.Finalizers, func(f string) bool { return f == resourcev1.Finalizer })
	_, err := c.client.ResourceV1().ResourceClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
	return err
}

// deleteIfUnused deletes claim, unreserved, when it was generated for a
// pod that is done or was replaced by a namesake; the garbage collector
// deletes it once its pod is gone, the pod's deletion may take long. A pod
// not cached is left to the garbage collector.
func (c *Controller) deleteIfUnused(ctx context.Context, claim *resourcev1.ResourceClaim) error {
	podName, podUID := owningPod(claim)
	if podName == "" {
		return nil
	}
	pod, ok := c.pods.Get(claim.Namespace, podName)
	if !ok || (string(pod.UID) == podUID && !podDone(pod)) {
		return nil
	}
	err := c.client.ResourceV1().ResourceClaims(claim.Namespace).Delete(ctx, claim.Name, metav1.DeleteOptions{})
	if err != nil {
		return fmt.Errorf("delete unused generated claim %s/%s: %w", claim.Namespace, claim.Name, err)
	}
	return nil
}
