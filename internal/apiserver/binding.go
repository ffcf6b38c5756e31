package apiserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// Binding a pod to a node, as upstream's BindingREST
// (pkg/registry/core/pod/storage/storage.go): the pod is written straight
// to storage (no pod admission, no pod validation), with the binding's uid
// and resourceVersion as preconditions.

var (
	podsResource    = schema.GroupResource{Resource: "pods"}
	bindingResource = schema.GroupResource{Resource: "pods/binding"}
)

func createBinding(ctx context.Context, c *subCreateCall) (runtime.Object, error) {
	b, ok := c.obj.(*corev1.Binding)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Binding object: %T", c.obj))
	}
	if c.rq.info.Subresource != "" && b.Name != c.name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	// Upstream returns the aggregate itself, which the handler answers
	// with a 500.
	if errs := validatePodBinding(b); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if err := c.validate(ctx, b.DeepCopy()); err != nil {
		return nil, err
	}
	if err := c.s.assignPod(ctx, b, c.dryRun()); err != nil {
		return nil, err
	}
	return successStatus(), nil
}

// validatePodBinding is upstream's ValidatePodBinding.
func validatePodBinding(b *corev1.Binding) field.ErrorList {
	var errs field.ErrorList
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	return errs
}

// assignPod sets the pod's node and merges the binding's annotations and
// labels. Failures that are not API errors are upstream's Conflict on
// pods/binding.
func (s *Server) assignPod(ctx context.Context, b *corev1.Binding, dryRun bool) error {
	res := s.podResource()
	key := layout.Key(res, b.Namespace, b.Name)
	for {
		kv, obj, err := s.readStored(ctx, res, key, b.Name)
		if err != nil {
			return err
		}
		pod := obj.(*corev1.Pod)
		if err := checkPreconditions(res, pod, bindingPreconditions(b)); err != nil {
			return err
		}
		if err := bindPod(pod, b, s.cfg.Now()); err != nil {
			return apierrors.NewConflict(bindingResource, b.Name, err)
		}
		if dryRun {
			return nil
		}
		data, err := layout.Encode(pod)
		if err != nil {
			return err
		}
		_, err = s.store.Update(ctx, key, data, kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		return err
	}
}

func bindingPreconditions(b *corev1.Binding) *metav1.Preconditions {
	if b.UID == "" && b.ResourceVersion == "" {
		return nil
	}
	p := &metav1.Preconditions{}
	if b.UID != "" {
		uid := b.UID
		p.UID = &uid
	}
	if b.ResourceVersion != "" {
		rv := b.ResourceVersion
		p.ResourceVersion = &rv
	}
	return p
}

// bindPod is the update of upstream's setPodNodeAndMetadata.
func bindPod(pod *corev1.Pod, b *corev1.Binding, now time.Time) error {
	if pod.DeletionTimestamp != nil {
		return fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name)
	}
	if pod.Spec.NodeName != "" {
		return fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName)
	}
	if len(pod.Spec.SchedulingGates) != 0 {
		return fmt.Errorf("pod %v has non-empty .spec.schedulingGates", pod.Name)
	}
	pod.Spec.NodeName = b.Target.Name
	pod.Status.NominatedNodeName = ""
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	for k, v := range b.Annotations {
		pod.Annotations[k] = v
	}
	// PodTopologyLabelsAdmission (beta, on): the binding's labels overwrite
	// the pod's.
	if len(b.Labels) > 0 && pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	for k, v := range b.Labels {
		pod.Labels[k] = v
	}
	updatePodCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, now)
	return nil
}

// updatePodCondition is upstream's podutil.UpdatePodCondition: the
// transition time moves only when the status changes.
func updatePodCondition(status *corev1.PodStatus, c corev1.PodCondition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	for i := range status.Conditions {
		old := &status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	status.Conditions = append(status.Conditions, c)
}

// podResource is the catalogue entry of v1 pods.
func (s *Server) podResource() *registry.Resource {
	res, _ := s.cat.Lookup(corev1.SchemeGroupVersion.WithResource("pods"))
	return res
}
