package replicaset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Event reasons, as kube-controller-manager's (pkg/controller).
const (
	reasonFailedCreate     = "FailedCreate"
	reasonSuccessfulCreate = "SuccessfulCreate"
	reasonFailedDelete     = "FailedDelete"
	reasonSuccessfulDelete = "SuccessfulDelete"
)

// PodFromTemplate is the pod a controller creates from its template: the
// template's labels, annotations, finalizers and spec, named after the
// controller (generateName "<name>-"), controlled by ref.
func PodFromTemplate(template *corev1.PodTemplateSpec, ownerName string, ref metav1.OwnerReference) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Labels:       map[string]string{},
		Annotations:  map[string]string{},
		GenerateName: generateNamePrefix(ownerName),
		Finalizers:   append([]string{}, template.Finalizers...),
	}}
	for k, v := range template.Labels {
		pod.Labels[k] = v
	}
	for k, v := range template.Annotations {
		pod.Annotations[k] = v
	}
	pod.OwnerReferences = append(pod.OwnerReferences, ref)
	pod.Spec = *template.Spec.DeepCopy()
	return pod
}

// generateNamePrefix is "<name>-", or name when upstream's validation of
// a generateName refuses "<name>-": it checks a DNS subdomain with the
// prefix's last two characters (the dash and the one before it) replaced
// by one letter, so the dash is kept even on a name of the maximum length.
func generateNamePrefix(name string) string {
	if name == "" || len(validation.IsDNS1123Subdomain(name[:len(name)-1]+"a")) == 0 {
		return name + "-"
	}
	return name
}

// controllerRef is the ownerReference of a pod rs controls.
func (c *Controller) controllerRef(rs *appsv1.ReplicaSet) metav1.OwnerReference {
	return *metav1.NewControllerRef(rs, c.kind.gvk)
}

// createPod creates one pod of rs, recording an event either way (none
// when the namespace is terminating).
func (c *Controller) createPod(ctx context.Context, rs *appsv1.ReplicaSet) error {
	pod := PodFromTemplate(&rs.Spec.Template, rs.Name, c.controllerRef(rs))
	if len(pod.Labels) == 0 {
		return errors.New("unable to create pods, no labels")
	}
	created, err := c.client.CoreV1().Pods(rs.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.recorder.Eventf(c.kind.eventObject(rs), corev1.EventTypeWarning, reasonFailedCreate, "Error creating: %v", err)
		}
		return err
	}
	c.recorder.Eventf(c.kind.eventObject(rs), corev1.EventTypeNormal, reasonSuccessfulCreate, "Created pod: %v", created.Name)
	return nil
}

// deletePod deletes a pod of rs, recording an event unless it was gone
// already.
func (c *Controller) deletePod(ctx context.Context, rs *appsv1.ReplicaSet, name string) error {
	if err := c.client.CoreV1().Pods(rs.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return err
		}
		c.recorder.Eventf(c.kind.eventObject(rs), corev1.EventTypeWarning, reasonFailedDelete, "Error deleting: %v", err)
		return fmt.Errorf("unable to delete pods: %v", err)
	}
	c.recorder.Eventf(c.kind.eventObject(rs), corev1.EventTypeNormal, reasonSuccessfulDelete, "Deleted pod: %v", name)
	return nil
}

// claimPods returns the active pods rs owns, after adopting the orphans
// its selector matches and releasing the pods it owns that the selector no
// longer matches (upstream's PodControllerRefManager). Adoption first
// rechecks, once, that rs is not being deleted, by a read from the server.
func (c *Controller) claimPods(ctx context.Context, rs *appsv1.ReplicaSet, selector labels.Selector, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	var claimed []*corev1.Pod
	var errs []error
	var canAdopt *error
	for _, pod := range pods {
		ref := metav1.GetControllerOfNoCopy(pod)
		matches := selector.Matches(labels.Set(pod.Labels))
		switch {
		case ref != nil && ref.UID != rs.UID:
			continue
		case ref != nil && matches:
			claimed = append(claimed, pod)
		case ref != nil:
			if rs.DeletionTimestamp != nil {
				continue
			}
			if err := c.releasePod(ctx, rs, pod); err != nil {
				errs = append(errs, err)
			}
		case rs.DeletionTimestamp != nil || !matches || pod.DeletionTimestamp != nil || pod.Namespace != rs.Namespace:
			continue
		default:
			if canAdopt == nil {
				err := c.recheckNotDeleted(ctx, rs)
				canAdopt = &err
			}
			if *canAdopt != nil {
				errs = append(errs, fmt.Errorf("can't adopt Pod %v/%v (%v): %v", pod.Namespace, pod.Name, pod.UID, *canAdopt))
				continue
			}
			if err := c.adoptPod(ctx, rs, pod); err != nil {
				if !apierrors.IsNotFound(err) {
					errs = append(errs, err)
				}
				continue
			}
			claimed = append(claimed, pod)
		}
	}
	return claimed, utilerrors.NewAggregate(errs)
}

// recheckNotDeleted reads rs from the server: adopting is refused when it
// is gone, replaced or being deleted.
func (c *Controller) recheckNotDeleted(ctx context.Context, rs *appsv1.ReplicaSet) error {
	fresh, err := c.kind.get(ctx, c.client, rs.Namespace, rs.Name)
	if err != nil {
		return fmt.Errorf("can't recheck DeletionTimestamp: %v", err)
	}
	if fresh.UID != rs.UID {
		return fmt.Errorf("can't recheck DeletionTimestamp: original %v %v/%v is gone: got uid %v, wanted %v", c.kind.gvk.Kind, rs.Namespace, rs.Name, fresh.UID, rs.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("%v/%v has just been deleted at %v", fresh.Namespace, fresh.Name, fresh.DeletionTimestamp)
	}
	return nil
}

// adoptPod makes rs the pod's controller, by a strategic merge patch
// conditional on the pod's uid.
func (c *Controller) adoptPod(ctx context.Context, rs *appsv1.ReplicaSet, pod *corev1.Pod) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": []metav1.OwnerReference{c.controllerRef(rs)}, "uid": pod.UID}})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

// releasePod removes rs's ownerReference from the pod; a pod gone or whose
// patch is invalid (its uid changed) is let go.
func (c *Controller) releasePod(ctx context.Context, rs *appsv1.ReplicaSet, pod *corev1.Pod) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": []map[string]string{{"$patch": "delete", "uid": string(rs.UID)}}, "uid": pod.UID}})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil
	}
	return err
}
