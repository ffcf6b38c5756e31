package resourceclaim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/utils/ptr"
)

// syncPod creates the missing claims of the pod namespace/name from their
// templates, records them in its status, and, once it is on a node,
// reserves its allocated claims for it. The first claim that cannot be
// created stops it, with an event on the pod.
func (c *Controller) syncPod(ctx context.Context, ns, name string) error {
	pod, ok := c.pods.Get(ns, name)
	if !ok || pod.DeletionTimestamp != nil {
		return nil
	}
	created := map[string]string{} // the pod's claim name → the ResourceClaim's
	for _, pc := range pod.Spec.ResourceClaims {
		if err := c.ensureClaim(ctx, pod, pc, created); err != nil {
			c.recorder.Event(pod, corev1.EventTypeWarning, "FailedResourceClaimCreation", fmt.Sprintf("PodResourceClaim %s: %v", pc.Name, err))
			return fmt.Errorf("pod %s/%s, PodResourceClaim %s: %v", ns, name, pc.Name, err)
		}
	}
	if len(created) > 0 {
		if err := c.recordClaims(ctx, pod, created); err != nil {
			return err
		}
	}
	if pod.Spec.NodeName == "" {
		return nil // the scheduler reserves the claims of the pods it binds
	}
	return c.reserveClaims(ctx, pod)
}

// ensureClaim adds to created the claim of pc, a claim of pod, when it is
// made from a template and the pod's status does not name an existing
// claim of the pod: the one the controller made before (found by owner
// and annotation), or a new one from the template.
func (c *Controller) ensureClaim(ctx context.Context, pod *corev1.Pod, pc corev1.PodResourceClaim, created map[string]string) error {
	name, checkOwner, err := resourceclaim.Name(pod, &pc)
	switch {
	case errors.Is(err, resourceclaim.ErrClaimNotFound):
	case err != nil:
		return fmt.Errorf("checking for claim before creating it: %v", err)
	case name == nil:
		return nil // recorded as not needed
	case *name != "":
		exists, err := c.claimExists(ctx, pod, *name, checkOwner)
		if err != nil || exists {
			return err
		}
	}
	if pc.ResourceClaimTemplateName == nil {
		return nil
	}
	claim := c.findGeneratedClaim(pod, pc.Name)
	if claim == nil {
		if claim, err = c.createClaim(ctx, pod, pc); err != nil {
			return err
		}
	}
	created[pc.Name] = claim.Name
	return nil
}

// claimExists reports whether the claim name (recorded in pod's status)
// exists and, when checkOwner, is the pod's: one deleted or taken over is
// made again. A claim not in the cache is looked up on the server.
func (c *Controller) claimExists(ctx context.Context, pod *corev1.Pod, name string, checkOwner bool) (bool, error) {
	claim, ok := c.claims.Get(pod.Namespace, name)
	if !ok {
		claim, ok = c.created.get(pod.Namespace, name, c.claims.Revision())
	}
	if !ok {
		var err error
		claim, err = c.client.ResourceV1().ResourceClaims(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("checking claim existence: %w", err)
		}
	}
	if checkOwner {
		if err := resourceclaim.IsForPod(pod, claim, false); err != nil {
			c.log.Warn("the claim made for the pod is no longer the pod's, making a new one",
				"pod", pod.Namespace+"/"+pod.Name, "podClaim", name, "err", err)
			return false, nil
		}
	}
	return true, nil
}

// findGeneratedClaim is a claim the pod controls made for its claim
// podClaim (the annotation says which), if any: one the controller made
// before it could record it in the pod's status.
func (c *Controller) findGeneratedClaim(pod *corev1.Pod, podClaim string) *resourcev1.ResourceClaim {
	owned := c.claims.ByIndex(claimOwnerIndex, pod.Namespace+"/"+string(pod.UID))
	owned = append(owned, c.created.ownedBy(pod.Namespace, pod.UID, c.claims.Revision())...)
	for _, claim := range owned {
		if name, ok := claim.Annotations[resourcev1.PodResourceClaimAnnotation]; ok && name == podClaim {
			return claim
		}
	}
	return nil
}

// createClaim creates the claim of pc from its template: its labels,
// annotations and spec, controlled by pod, named after both.
func (c *Controller) createClaim(ctx context.Context, pod *corev1.Pod, pc corev1.PodResourceClaim) (*resourcev1.ResourceClaim, error) {
	tmplName := *pc.ResourceClaimTemplateName
	tmpl, ok := c.templates.Get(pod.Namespace, tmplName)
	if !ok {
		notFound := apierrors.NewNotFound(resourcev1.Resource("resourceclaimtemplate"), tmplName)
		return nil, fmt.Errorf("resource claim template %q: %w", tmplName, notFound)
	}
	if c.prioritizedListOff && hasPrioritizedList(tmpl) {
		return nil, errors.New("template includes a prioritized list of subrequests, but the feature is disabled")
	}
	annotations := maps.Clone(tmpl.Spec.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[resourcev1.PodResourceClaimAnnotation] = pc.Name
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{GenerateName: generateName(pod.Name, pc.Name), Annotations: annotations,
			Labels: maps.Clone(tmpl.Spec.Labels),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
				Controller: ptr.To(true)}}},
		Spec: *tmpl.Spec.Spec.DeepCopy(),
	}
	made, err := c.client.ResourceV1().ResourceClaims(pod.Namespace).Create(ctx, claim, metav1.CreateOptions{})
	c.metrics.created(claim, err)
	if err != nil {
		return nil, fmt.Errorf("create ResourceClaim %s: %w", claim.Name, err)
	}
	c.created.add(made)
	return made, nil
}

// maxGenerateName leaves room in a 63-character name for the server's
// five random characters.
const maxGenerateName = 57

// generateName is "<pod>-<claim>-", or when that is longer than
// maxGenerateName both names cut in proportion to their lengths and
// joined by "-" (the server would cut the end, the claim's name, alone).
func generateName(pod, claim string) string {
	name := pod + "-" + claim + "-"
	if n := len(name); n > maxGenerateName {
		return pod[:len(pod)*maxGenerateName/n] + "-" + claim[:len(claim)*maxGenerateName/n]
	}
	return name
}

func hasPrioritizedList(tmpl *resourcev1.ResourceClaimTemplate) bool {
	for _, r := range tmpl.Spec.Spec.Devices.Requests {
		if len(r.FirstAvailable) > 0 {
			return true
		}
	}
	return false
}

// recordClaims applies pod's status.resourceClaimStatuses: those it
// records with a claim, and created, sorted by the pod's claim name.
func (c *Controller) recordClaims(ctx context.Context, pod *corev1.Pod, created map[string]string) error {
	merged := map[string]string{}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			merged[s.Name] = *s.ResourceClaimName
		}
	}
	maps.Copy(merged, created)
	var statuses []*corev1apply.PodResourceClaimStatusApplyConfiguration
	for _, name := range slices.Sorted(maps.Keys(merged)) {
		statuses = append(statuses, corev1apply.PodResourceClaimStatus().WithName(name).WithResourceClaimName(merged[name]))
	}
	apply := corev1apply.Pod(pod.Name, pod.Namespace).WithStatus(corev1apply.PodStatus().WithResourceClaimStatuses(statuses...))
	_, err := c.client.CoreV1().Pods(pod.Namespace).ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("update pod %s/%s ResourceClaimStatuses: %v", pod.Namespace, pod.Name, err)
	}
	return nil
}

// reserveClaims reserves for pod, which is on a node, each of its claims
// that is allocated and not reserved for it (a pod bound without the
// scheduler). A claim not there yet waits for its add.
func (c *Controller) reserveClaims(ctx context.Context, pod *corev1.Pod) error {
	for i := range pod.Spec.ResourceClaims {
		name, checkOwner, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil {
			return err
		}
		if name == nil {
			continue
		}
		claim, ok := c.claims.Get(pod.Namespace, *name)
		if !ok {
			return nil
		}
		if checkOwner {
			if err := resourceclaim.IsForPod(pod, claim, false); err != nil {
				return err
			}
		}
		if !needsReserving(pod, claim) {
			continue
		}
		claim = claim.DeepCopy()
		claim.Status.ReservedFor = append(claim.Status.ReservedFor,
			resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID})
		if _, err := c.client.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("reserve claim %s/%s: %w", claim.Namespace, claim.Name, err)
		}
	}
	return nil
}
