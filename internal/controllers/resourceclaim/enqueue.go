package resourceclaim

import (
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/utils/ptr"
)

// The controller's indexes, named apart from other controllers' on the
// shared caches.
const (
	// podClaimIndex finds pods by the namespace/name of a claim they use
	// (named, or generated and recorded in their status).
	podClaimIndex = "resourceclaim-controller:claims"
	// podTemplateIndex finds pods by the namespace/name of a template
	// they make a claim from.
	podTemplateIndex = "resourceclaim-controller:templates"
	// claimOwnerIndex finds claims by the namespace/UID of the pod that
	// controls them.
	claimOwnerIndex = "resourceclaim-controller:owner"
)

func podClaimKeys(pod *corev1.Pod) []string {
	var keys []string
	for i := range pod.Spec.ResourceClaims {
		name, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil || name == nil {
			continue // not created yet, or a field this version does not know
		}
		keys = appendNew(keys, pod.Namespace+"/"+*name)
	}
	return keys
}

func podTemplateKeys(pod *corev1.Pod) []string {
	var keys []string
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName != nil {
			keys = appendNew(keys, pod.Namespace+"/"+*pc.ResourceClaimTemplateName)
		}
	}
	return keys
}

func claimOwnerKeys(claim *resourcev1.ResourceClaim) []string {
	if name, uid := owningPod(claim); name != "" {
		return []string{claim.Namespace + "/" + string(uid)}
	}
	return nil
}

// appendNew appends key to keys unless it is there.
func appendNew(keys []string, key string) []string {
	for _, k := range keys {
		if k == key {
			return keys
		}
	}
	return append(keys, key)
}

// enqueuePod queues what a change of pod (deleted: its removal) may give
// work to: its claims, when it will not run (any more), to release them;
// the pod itself when a claim of it is to be created or reserved.
func (c *Controller) enqueuePod(pod *corev1.Pod, deleted bool) {
	if len(pod.Spec.ResourceClaims) == 0 && pod.Status.ExtendedResourceClaimStatus == nil {
		return
	}
	if deleted {
		c.deleted.add(pod.UID)
	}
	if !podNeedsClaims(pod, deleted) {
		for name := range resourceclaim.PodClaims(pod) {
			c.queue.Add(claimKeyPrefix + pod.Namespace + "/" + name)
		}
	}
	if c.podNeedsWork(pod) {
		c.queue.Add(podKeyPrefix + pod.Namespace + "/" + pod.Name)
	}
}

// podNeedsClaims reports whether pod may still run: it exists, has not
// terminated, and was not deleted before it was scheduled.
func podNeedsClaims(pod *corev1.Pod, deleted bool) bool {
	return !deleted && !podTerminated(pod) && (pod.DeletionTimestamp == nil || pod.Spec.NodeName != "")
}

// podTerminated: its phase is Succeeded or Failed.
func podTerminated(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// podDone reports that none of pod's containers runs or will: it
// terminated, or was deleted before it was scheduled.
func podDone(pod *corev1.Pod) bool {
	return podTerminated(pod) || pod.DeletionTimestamp != nil && pod.Spec.NodeName == ""
}

// podNeedsWork reports whether syncing pod has something to do: a claim
// to create from a template, or, once it is on a node, an allocated claim
// to reserve for it. A pod being deleted has none.
func (c *Controller) podNeedsWork(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	for i := range pod.Spec.ResourceClaims {
		pc := &pod.Spec.ResourceClaims[i]
		name, checkOwner, err := resourceclaim.Name(pod, pc)
		if err != nil {
			return true // not created yet (or unknown: the sync reports it)
		}
		if name == nil {
			continue
		}
		claim, ok := c.claims.Get(pod.Namespace, *name)
		if !ok {
			if pc.ResourceClaimTemplateName != nil {
				return true
			}
			continue // the user's to create
		}
		if checkOwner && resourceclaim.IsForPod(pod, claim, false) != nil {
			continue // someone else's: nothing to do until it goes
		}
		if pod.Spec.NodeName != "" && needsReserving(pod, claim) {
			return true
		}
	}
	return false
}

// needsReserving: claim is allocated and not reserved for pod.
func needsReserving(pod *corev1.Pod, claim *resourcev1.ResourceClaim) bool {
	return claim.Status.Allocation != nil && !resourceclaim.IsReservedForPod(pod, claim, false) && resourceclaim.CanBeReserved(claim)
}

// enqueueClaim queues a new or changed claim (a deleted one needs
// nothing), for its stale reservations, and the pods that use it.
func (c *Controller) enqueueClaim(claim *resourcev1.ResourceClaim, deleted bool) {
	if !deleted {
		c.queue.Add(claimKeyPrefix + claim.Namespace + "/" + claim.Name)
	}
	for _, pod := range c.pods.ByIndex(podClaimIndex, claim.Namespace+"/"+claim.Name) {
		c.enqueuePod(pod, false)
	}
}

// enqueueTemplate queues the pods that make claims from a new or changed
// template: one waiting for it creates its claim now.
func (c *Controller) enqueueTemplate(tmpl *resourcev1.ResourceClaimTemplate) {
	for _, pod := range c.pods.ByIndex(podTemplateIndex, tmpl.Namespace+"/"+tmpl.Name) {
		c.enqueuePod(pod, false)
	}
}

// owningPod is the name and UID of the pod that controls claim, if any.
func owningPod(claim *resourcev1.ResourceClaim) (string, string) {
	for _, o := range claim.OwnerReferences {
		if ptr.Deref(o.Controller, false) && o.APIVersion == "v1" && o.Kind == "Pod" {
			return o.Name, string(o.UID)
		}
	}
	return "", ""
}
