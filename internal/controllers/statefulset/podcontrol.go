package statefulset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/retry"
)

// recordPodEvent records "<Verb> Pod <pod> in StatefulSet <set>
// successful" (Successful<Verb>) or "... failed error: <err>"
// (Failed<Verb>), as upstream words them; verb is capitalized.
func (c *Controller) recordPodEvent(verb string, set *appsv1.StatefulSet, pod *corev1.Pod, err error) {
	if err == nil {
		c.recorder.Event(set, corev1.EventTypeNormal, "Successful"+verb,
			fmt.Sprintf("%s Pod %s in StatefulSet %s successful", verb, pod.Name, set.Name))
		return
	}
	c.recorder.Event(set, corev1.EventTypeWarning, "Failed"+verb,
		fmt.Sprintf("%s Pod %s in StatefulSet %s failed error: %s", verb, pod.Name, set.Name, err))
}

func (c *Controller) recordClaimEvent(set *appsv1.StatefulSet, pod *corev1.Pod, claim *corev1.PersistentVolumeClaim, err error) {
	if err == nil {
		c.recorder.Event(set, corev1.EventTypeNormal, "SuccessfulCreate",
			fmt.Sprintf("Create Claim %s Pod %s in StatefulSet %s success", claim.Name, pod.Name, set.Name))
		return
	}
	c.recorder.Event(set, corev1.EventTypeWarning, "FailedCreate",
		fmt.Sprintf("Create Claim %s for Pod %s in StatefulSet %s failed error: %s", claim.Name, pod.Name, set.Name, err))
}

// createPod creates the pod's claims, then the pod, then sets its claims'
// owners; an AlreadyExists answer is returned without an event.
func (c *Controller) createPod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	if err := c.createClaims(ctx, set, pod); err != nil {
		c.recordPodEvent("Create", set, pod, err)
		return err
	}
	created, err := c.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return err
	}
	if err == nil {
		c.wrote(set, podsResource, created.ResourceVersion)
	}
	if err := c.updateClaimsForRetentionPolicy(ctx, set, pod); err != nil {
		c.recordPodEvent("Update", set, pod, err)
		return err
	}
	c.recordPodEvent("Create", set, pod, err)
	return err
}

// updatePod gives the pod its identity and storage and its claims their
// owners, writing it when something changed; a conflict is retried with
// the cached pod.
func (c *Controller) updatePod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	attempted := false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		consistent := true
		if !identityMatches(set, pod) {
			updateIdentity(set, pod)
			consistent = false
		}
		if !storageMatches(set, pod) {
			updateStorage(set, pod)
			consistent = false
			if err := c.createClaims(ctx, set, pod); err != nil {
				c.recordPodEvent("Update", set, pod, err)
				return err
			}
		}
		match, err := c.claimsMatchRetentionPolicy(set, pod)
		if err != nil {
			c.recordPodEvent("Update", set, pod, err)
			return err
		}
		if !match {
			if err := c.updateClaimsForRetentionPolicy(ctx, set, pod); err != nil {
				c.recordPodEvent("Update", set, pod, err)
				return err
			}
			consistent = false
		}
		if consistent {
			return nil
		}
		attempted = true
		updated, err := c.client.CoreV1().Pods(pod.Namespace).Update(ctx, pod, metav1.UpdateOptions{})
		if err == nil {
			c.wrote(set, podsResource, updated.ResourceVersion)
			return nil
		}
		if cached, ok := c.pods.Get(set.Namespace, pod.Name); ok {
			pod = cached.DeepCopy()
		}
		return err
	})
	if attempted {
		c.recordPodEvent("Update", set, pod, err)
	}
	return err
}

// deletePod deletes the pod; one already gone counts as deleted.
func (c *Controller) deletePod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	err := c.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		c.recordPodEvent("Delete", set, pod, err)
		return err
	}
	c.recordPodEvent("Delete", set, pod, nil)
	return nil
}

// createClaims creates the pod's claims that do not exist; a claim being
// deleted is an error (the pod must wait for it to go).
func (c *Controller) createClaims(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	var errs []error
	for _, claim := range Claims(set, pod) {
		existing, ok := c.claims.Get(claim.Namespace, claim.Name)
		if ok {
			if existing.DeletionTimestamp != nil {
				errs = append(errs, fmt.Errorf("pvc %s is being deleted", claim.Name))
			}
			continue
		}
		created, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Create(ctx, &claim, metav1.CreateOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to create PVC %s: %w", claim.Name, err))
		} else {
			c.wrote(set, claimsResource, created.ResourceVersion)
		}
		if err == nil || !apierrors.IsAlreadyExists(err) {
			c.recordClaimEvent(set, pod, &claim, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// createMissingClaims creates the claims of a pending pod that are
// missing (deleted after it was created) and sets their owners.
func (c *Controller) createMissingClaims(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	if err := c.createClaims(ctx, set, pod); err != nil {
		return err
	}
	if err := c.updateClaimsForRetentionPolicy(ctx, set, pod); err != nil {
		c.recordPodEvent("Update", set, pod, err)
		return err
	}
	return nil
}

// podClaims are the existing claims of the pod's templates.
func (c *Controller) podClaims(set *appsv1.StatefulSet, pod *corev1.Pod) []*corev1.PersistentVolumeClaim {
	var out []*corev1.PersistentVolumeClaim
	ord := ordinalOf(pod)
	for i := range set.Spec.VolumeClaimTemplates {
		if claim, ok := c.claims.Get(set.Namespace, ClaimName(set, &set.Spec.VolumeClaimTemplates[i], ord)); ok {
			out = append(out, claim)
		}
	}
	return out
}

// claimsMatchRetentionPolicy: every existing claim of the pod has the
// owners the policy wants.
func (c *Controller) claimsMatchRetentionPolicy(set *appsv1.StatefulSet, pod *corev1.Pod) (bool, error) {
	for _, claim := range c.podClaims(set, pod) {
		if !ClaimOwnersUpToDate(claim, set, pod) {
			return false, nil
		}
	}
	return true, nil
}

// updateClaimsForRetentionPolicy writes the owners the policy wants on
// the pod's existing claims, warning of a claim another controller holds.
func (c *Controller) updateClaimsForRetentionPolicy(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	for _, claim := range c.podClaims(set, pod) {
		if hasUnexpectedController(claim, set, pod) {
			c.recorder.Event(set, corev1.EventTypeWarning, "ConflictingController", fmt.Sprintf(
				"PersistentVolumeClaim %s has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim", claim.Name))
		}
		if ClaimOwnersUpToDate(claim, set, pod) {
			continue
		}
		claim = claim.DeepCopy()
		SetClaimOwners(claim, set, pod)
		updated, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("could not update claim %s for delete policy ownerRefs: %w", claim.Name, err)
		}
		c.wrote(set, claimsResource, updated.ResourceVersion)
	}
	return nil
}

// claimIsStale: under a policy deleting claims on scale down, a claim of
// the pod still refers to an earlier pod of its name (it is waiting for
// the garbage collector).
func (c *Controller) claimIsStale(set *appsv1.StatefulSet, pod *corev1.Pod) (bool, error) {
	if retentionPolicy(set).WhenScaled == appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		return false, nil
	}
	for _, claim := range c.podClaims(set, pod) {
		if hasStaleOwnerRef(claim, pod, podKind) {
			return true, nil
		}
	}
	return false, nil
}
