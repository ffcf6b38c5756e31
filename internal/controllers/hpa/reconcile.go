package hpa

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
)

// Action labels of the controller's metrics.
const (
	actionScaleUp   = "scale_up"
	actionScaleDown = "scale_down"
	actionNone      = "none"
)

// reconcile reads the autoscaler's target scale, decides the replicas it
// should have, rescales it when they differ and writes the status.
func (c *Controller) reconcile(ctx context.Context, shared *autoscalingv2.HorizontalPodAutoscaler, key string) (retErr error) {
	action := actionNone
	start := time.Now()
	defer func() { c.monitor.reconciled(action, retErr, time.Since(start)) }()

	h := shared.DeepCopy()
	original := h.Status.DeepCopy()
	ref := h.Spec.ScaleTargetRef
	reference := fmt.Sprintf("%s/%s/%s", ref.Kind, h.Namespace, ref.Name)

	scale, gr, err := c.readScale(ctx, h, original)
	if err != nil {
		return err
	}
	setCondition(h, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
	current := scale.Spec.Replicas
	c.recordInitialRecommendation(key, current)

	minReplicas := int32(1)
	if h.Spec.MinReplicas != nil {
		minReplicas = *h.Spec.MinReplicas
	}
	scaledToZero := conditionTrue(h, autoscalingv2.ScaledToZero)
	fromZero := scaledToZero && hasObjectOrExternalMetric(h)

	var statuses []autoscalingv2.MetricStatus
	var desired int32
	var reason string
	rescale, compute := true, true
	switch {
	case current == 0:
		if !((minReplicas != 0 && scaledToZero) || fromZero) {
			compute, rescale = false, false
			setCondition(h, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
		}
	case current > h.Spec.MaxReplicas:
		reason, desired, compute = "Current number of replicas above Spec.MaxReplicas", h.Spec.MaxReplicas, false
	case current < minReplicas:
		reason, desired, compute = "Current number of replicas below Spec.MinReplicas", minReplicas, false
	}

	if compute {
		p, st, err := c.computeReplicas(ctx, h, scale)
		statuses = st
		if err != nil && p.replicas == -1 {
			c.setStatus(h, current, h.Status.DesiredReplicas, statuses, false)
			c.writeStatusIfChanged(ctx, original, h)
			c.recorder.Event(h, corev1.EventTypeWarning, "FailedComputeMetricsReplicas", err.Error())
			return fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s: %w", reference, err)
		}
		if err != nil {
			retErr = err
		}
		metric := ""
		if p.replicas > desired {
			desired, metric = p.replicas, p.metric
		}
		if desired > current {
			reason = fmt.Sprintf("%s above target", metric)
		}
		if desired < current {
			reason = "All metrics below target"
		}
		if h.Spec.Behavior == nil {
			desired = c.normalize(h, key, current, desired, minReplicas)
		} else {
			desired = c.normalizeWithBehavior(h, key, current, desired, minReplicas)
		}
		if current == 0 && minReplicas != 0 && scaledToZero && desired < minReplicas {
			desired = minReplicas
			if reason == "" {
				reason = "Current number of replicas below Spec.MinReplicas"
			}
		}
		rescale = desired != current
	}

	if rescale {
		if err := c.rescale(ctx, h, scale, gr, desired); err != nil {
			c.recorder.Eventf(h, corev1.EventTypeWarning, "FailedRescale", "New size: %d; reason: %s; error: %v", desired, reason, err.Error())
			setCondition(h, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", "the HPA controller was unable to update the target scale: %v", err)
			c.setStatus(h, current, h.Status.DesiredReplicas, statuses, false)
			c.writeStatusIfChanged(ctx, original, h)
			return fmt.Errorf("failed to rescale %s: %w", reference, err)
		}
		setCondition(h, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", "the HPA controller was able to update the target scale to %d", desired)
		c.recorder.Eventf(h, corev1.EventTypeNormal, "SuccessfulRescale", "New size: %d; reason: %s", desired, reason)
		c.storeScaleEvent(h.Spec.Behavior, key, current, desired)
		c.log.Info("rescaled", "hpa", key, "currentReplicas", current, "desiredReplicas", desired, "reason", reason)
		if current > 0 && desired == 0 && minReplicas == 0 && hasObjectOrExternalMetric(h) {
			setCondition(h, autoscalingv2.ScaledToZero, corev1.ConditionTrue, "ScaledToZero", "the HPA controller scaled the workload to zero")
		} else {
			setCondition(h, autoscalingv2.ScaledToZero, corev1.ConditionFalse, "NotScaledToZero", "the HPA controller did not scale the workload to zero")
		}
		action = actionScaleDown
		if desired > current {
			action = actionScaleUp
		}
	} else {
		desired = current
	}

	c.setStatus(h, current, desired, statuses, rescale)
	c.monitor.desiredReplicas(h.Namespace, h.Name, desired)
	if err := c.writeStatusIfChanged(ctx, original, h); err != nil {
		return err
	}
	return retErr
}

// readScale resolves the target's kind and reads its scale; failing, it
// records FailedGetScale (event and AbleToScale condition) and writes the
// status.
func (c *Controller) readScale(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, original *autoscalingv2.HorizontalPodAutoscalerStatus) (*autoscalingv1.Scale, schema.GroupResource, error) {
	ref := h.Spec.ScaleTargetRef
	fail := func(err, ret error) error {
		c.recorder.Event(h, corev1.EventTypeWarning, "FailedGetScale", err.Error())
		setCondition(h, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
		c.writeStatusIfChanged(ctx, original, h)
		return ret
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, schema.GroupResource{}, fail(err, fmt.Errorf("invalid API version in scale target reference: %v%w", err, errSpec))
	}
	mappings, err := c.target.mappings(schema.GroupKind{Group: gv.Group, Kind: ref.Kind})
	if err != nil {
		return nil, schema.GroupResource{}, fail(err, fmt.Errorf("unable to determine resource for scale target reference: %w", err))
	}
	scale, gr, err := c.target.get(ctx, h.Namespace, ref.Name, mappings)
	if err != nil {
		return nil, schema.GroupResource{}, fail(err, fmt.Errorf("failed to query scale subresource for %s/%s/%s: %w", ref.Kind, h.Namespace, ref.Name, err))
	}
	return scale, gr, nil
}

// rescale writes desired to the target's scale, reading it again after a
// failed write and retrying on conflicts.
func (c *Controller) rescale(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, scale *autoscalingv1.Scale, gr schema.GroupResource, desired int32) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale.Spec.Replicas = desired
		err := c.target.update(ctx, h.Namespace, gr, scale)
		if err == nil {
			return nil
		}
		if latest, getErr := c.target.read(ctx, h.Namespace, gr, h.Spec.ScaleTargetRef.Name); getErr == nil {
			scale = latest
		}
		return err
	})
}

// setStatus replaces h's status with the replicas and metric statuses,
// keeping its conditions and last scale time (now when it rescaled).
func (c *Controller) setStatus(h *autoscalingv2.HorizontalPodAutoscaler, current, desired int32, metrics []autoscalingv2.MetricStatus, rescaled bool) {
	generation := h.Generation
	h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: current, DesiredReplicas: desired, LastScaleTime: h.Status.LastScaleTime,
		CurrentMetrics: metrics, Conditions: h.Status.Conditions, ObservedGeneration: &generation}
	if rescaled {
		now := metav1.Now()
		h.Status.LastScaleTime = &now
	}
}

// writeStatusIfChanged writes h's status unless it equals original; a
// failed write is a FailedUpdateStatus event.
func (c *Controller) writeStatusIfChanged(ctx context.Context, original *autoscalingv2.HorizontalPodAutoscalerStatus, h *autoscalingv2.HorizontalPodAutoscaler) error {
	if apiequality.Semantic.DeepEqual(original, &h.Status) {
		return nil
	}
	updated, err := c.client.AutoscalingV2().HorizontalPodAutoscalers(h.Namespace).UpdateStatus(ctx, h, metav1.UpdateOptions{})
	if err != nil {
		c.recorder.Event(h, corev1.EventTypeWarning, "FailedUpdateStatus", err.Error())
		return fmt.Errorf("failed to update status for %s: %w", h.Name, err)
	}
	c.consistency.wrote(keyOf(updated), updated.ResourceVersion)
	return nil
}

// errorLabel is the error label of the controller's metrics for err.
func errorLabel(err error) string {
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, errSpec):
		return "spec"
	}
	return "internal"
}
