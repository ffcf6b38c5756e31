package replicaset

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/admitd/admitd/internal/controllers"
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
// longer matches (upstream's PodControllerRefManager).
func (c *Controller) claimPods(ctx context.Context, rs *appsv1.ReplicaSet, selector labels.Selector, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	m := &controllers.ControllerRefManager[*corev1.Pod]{Owner: rs, OwnerKind: c.kind.gvk, Kind: "Pod", Selector: selector,
		Get: func(ctx context.Context) (metav1.Object, error) {
			return c.kind.get(ctx, c.client, rs.Namespace, rs.Name)
		},
		Patch: controllers.PatchPods(c.client)}
	return m.Claim(ctx, pods)
}
