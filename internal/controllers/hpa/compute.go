package hpa

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// errSpec marks an error of the autoscaler's spec (the error label
// "spec" of the controller's metrics), as upstream's.
var errSpec = errors.New("")

// proposal is what one metric proposes.
type proposal struct {
	replicas  int32
	metric    string
	timestamp time.Time
}

// computeReplicas is the largest count the metrics propose and their
// statuses. When every metric fails, or some do and the others would
// scale down, the first failure's condition is set and replicas is -1;
// otherwise ScalingActive is ValidMetricFound and the failures (if any)
// are returned with the proposal.
func (c *Controller) computeReplicas(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, scale *autoscalingv1.Scale) (proposal, []autoscalingv2.MetricStatus, error) {
	selector, err := c.validSelector(h, scale.Status.Selector)
	if err != nil {
		return proposal{replicas: -1}, nil, err
	}
	specs := h.Spec.Metrics
	statuses := make([]autoscalingv2.MetricStatus, len(specs))
	var best proposal
	invalid := 0
	var firstErr error
	var firstCond autoscalingv2.HorizontalPodAutoscalerCondition
	for i, spec := range specs {
		p, cond, err := c.computeMetric(ctx, h, spec, scale.Spec.Replicas, scale.Status.Replicas, selector, &statuses[i])
		if err != nil {
			if invalid == 0 {
				firstErr, firstCond = err, cond
			}
			invalid++
			continue
		}
		if best.replicas == 0 || p.replicas > best.replicas {
			best = p
		}
	}
	if firstErr != nil {
		firstErr = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %w", invalid, len(specs), firstErr)
	}
	if invalid >= len(specs) || (invalid > 0 && best.replicas < scale.Spec.Replicas) {
		setCondition(h, firstCond.Type, firstCond.Status, firstCond.Reason, "%s", firstCond.Message)
		return proposal{replicas: -1}, statuses, firstErr
	}
	setCondition(h, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from %s", best.metric)
	return best, statuses, firstErr
}

// validSelector parses the target's selector, refusing none, a bad one
// and one whose pods another autoscaler's selector also picks.
func (c *Controller) validSelector(h *autoscalingv2.HorizontalPodAutoscaler, selector string) (labels.Selector, error) {
	if selector == "" {
		msg := "selector is required"
		c.recorder.Event(h, corev1.EventTypeWarning, "SelectorRequired", msg)
		setCondition(h, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "the HPA target's scale is missing a selector")
		return nil, errors.New(msg)
	}
	parsed, err := labels.Parse(selector)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		c.recorder.Event(h, corev1.EventTypeWarning, "InvalidSelector", msg)
		setCondition(h, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "%s", msg)
		return nil, errors.New(msg)
	}
	key := keyOf(h)
	if !c.selectors.putIfPresent(h.Namespace, key, parsed) {
		return nil, fmt.Errorf("HPA %s/%s was deleted during reconciliation", h.Namespace, h.Name)
	}
	if others := c.selectors.matchingPods(h.Namespace, c.podsMatching(h.Namespace, parsed), 2); len(others) > 1 {
		msg := fmt.Sprintf("pods by selector %v are controlled by more than one HPA (e.g. %v)", selector, others)
		c.recorder.Event(h, corev1.EventTypeWarning, "AmbiguousSelector", msg)
		setCondition(h, autoscalingv2.ScalingActive, corev1.ConditionFalse, "AmbiguousSelector", "%s", msg)
		return nil, errors.New(msg)
	}
	return parsed, nil
}

// computeMetric is one metric's proposal, its status written to status;
// on failure the ScalingActive condition to set.
func (c *Controller) computeMetric(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, specReplicas, statusReplicas int32,
	selector labels.Selector, status *autoscalingv2.MetricStatus) (p proposal, cond autoscalingv2.HorizontalPodAutoscalerCondition, err error) {
	start := time.Now()
	defer func() { c.monitor.metricComputed(h, p.replicas, err, time.Since(start), spec.Type) }()
	if sourceMissing(spec) {
		// validation refuses such a spec; one stored otherwise (written to
		// etcd directly, or before that validation) must not stop the
		// controller
		err = fmt.Errorf("metric source of type %q is missing%w", string(spec.Type), errSpec)
		return proposal{}, c.unableToCompute(h, "InvalidMetricSourceType", err), err
	}
	switch spec.Type {
	case autoscalingv2.ObjectMetricSourceType:
		metricSelector, err := metav1.LabelSelectorAsSelector(spec.Object.Metric.Selector)
		if err != nil {
			return proposal{}, c.unableToCompute(h, "FailedGetObjectMetric", err), fmt.Errorf("failed to get object metric value: %w", err)
		}
		p, cond, err = c.objectMetric(ctx, h, spec, specReplicas, statusReplicas, selector, metricSelector, status)
		if err != nil {
			return proposal{}, cond, fmt.Errorf("failed to get object metric value: %w", err)
		}
	case autoscalingv2.PodsMetricSourceType:
		metricSelector, err := metav1.LabelSelectorAsSelector(spec.Pods.Metric.Selector)
		if err != nil {
			return proposal{}, c.unableToCompute(h, "FailedGetPodsMetric", err), fmt.Errorf("failed to get pods metric value: %w", err)
		}
		p, cond, err = c.podsMetric(ctx, h, spec, specReplicas, selector, metricSelector, status)
		if err != nil {
			return proposal{}, cond, fmt.Errorf("failed to get pods metric value: %w", err)
		}
	case autoscalingv2.ResourceMetricSourceType:
		p, cond, err = c.resourceMetric(ctx, h, specReplicas, spec.Resource.Name, "", spec.Resource.Target, selector, status)
		if err != nil {
			return proposal{}, cond, fmt.Errorf("failed to get %s resource metric value: %w", spec.Resource.Name, err)
		}
	case autoscalingv2.ContainerResourceMetricSourceType:
		p, cond, err = c.resourceMetric(ctx, h, specReplicas, spec.ContainerResource.Name, spec.ContainerResource.Container, spec.ContainerResource.Target, selector, status)
		if err != nil {
			return proposal{}, cond, fmt.Errorf("failed to get %s container metric value: %w", spec.ContainerResource.Container, err)
		}
	case autoscalingv2.ExternalMetricSourceType:
		p, cond, err = c.externalMetric(ctx, h, spec, specReplicas, statusReplicas, selector, status)
		if err != nil {
			return proposal{}, cond, fmt.Errorf("failed to get %s external metric value: %w", spec.External.Metric.Name, err)
		}
	default:
		err = fmt.Errorf("unknown metric source type %q%w", string(spec.Type), errSpec)
		return proposal{}, c.unableToCompute(h, "InvalidMetricSourceType", err), err
	}
	return p, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
}

// unableToCompute records the failure as an event of reason and returns
// the ScalingActive condition saying so.
func (c *Controller) unableToCompute(h *autoscalingv2.HorizontalPodAutoscaler, reason string, err error) autoscalingv2.HorizontalPodAutoscalerCondition {
	c.recorder.Event(h, corev1.EventTypeWarning, reason, err.Error())
	return autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse, Reason: reason,
		Message: fmt.Sprintf("the HPA was unable to compute the replica count: %v", err)}
}

// resourceMetric is a Resource or ContainerResource metric's proposal
// (container names the container of the latter).
func (c *Controller) resourceMetric(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, current int32, name corev1.ResourceName, container string,
	target autoscalingv2.MetricTarget, selector labels.Selector, status *autoscalingv2.MetricStatus) (proposal, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	reason := "FailedGetResourceMetric"
	if container != "" {
		reason = "FailedGetContainerResourceMetric"
	}
	p, value, err := c.resourceValue(ctx, h, current, name, container, target, selector)
	if err != nil {
		return proposal{}, c.unableToCompute(h, reason, err), err
	}
	if container == "" {
		*status = autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: name, Current: value}}
	} else {
		*status = autoscalingv2.MetricStatus{Type: autoscalingv2.ContainerResourceMetricSourceType,
			ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: name, Container: container, Current: value}}
	}
	return p, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
}

// resourceValue proposes from an average value target, else from an
// average utilization one.
func (c *Controller) resourceValue(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, current int32, name corev1.ResourceName, container string,
	target autoscalingv2.MetricTarget, selector labels.Selector) (proposal, autoscalingv2.MetricValueStatus, error) {
	tol := c.tolerancesOf(h)
	if target.AverageValue != nil {
		n, raw, ts, err := c.calc.rawResourceReplicas(ctx, current, target.AverageValue.MilliValue(), name, tol, h.Namespace, selector, container)
		if err != nil {
			return proposal{}, autoscalingv2.MetricValueStatus{}, fmt.Errorf("failed to get %s usage: %w", name, err)
		}
		q := quantityOf(name, raw)
		return proposal{n, fmt.Sprintf("%s resource", name), ts}, autoscalingv2.MetricValueStatus{AverageValue: &q}, nil
	}
	if target.AverageUtilization == nil {
		return proposal{}, autoscalingv2.MetricValueStatus{}, errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
	}
	n, utilization, raw, ts, err := c.calc.resourceReplicas(ctx, current, *target.AverageUtilization, name, tol, h.Namespace, selector, container)
	if err != nil {
		return proposal{}, autoscalingv2.MetricValueStatus{}, fmt.Errorf("failed to get %s utilization: %w", name, err)
	}
	metric := fmt.Sprintf("%s resource utilization (percentage of request)", name)
	if container != "" {
		metric = fmt.Sprintf("%s container resource utilization (percentage of request)", name)
	}
	q := quantityOf(name, raw)
	return proposal{n, metric, ts}, autoscalingv2.MetricValueStatus{AverageUtilization: &utilization, AverageValue: &q}, nil
}

// quantityOf is a usage (milli-units) as the metrics server formats it:
// memory in binary units, the rest decimal.
func quantityOf(name corev1.ResourceName, milli int64) resource.Quantity {
	format := resource.DecimalSI
	if name == corev1.ResourceMemory {
		format = resource.BinarySI
	}
	return *resource.NewMilliQuantity(milli, format)
}

func (c *Controller) podsMetric(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, current int32,
	selector, metricSelector labels.Selector, status *autoscalingv2.MetricStatus) (proposal, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	n, usage, ts, err := c.calc.podsMetricReplicas(ctx, current, spec.Pods.Target.AverageValue.MilliValue(), spec.Pods.Metric.Name, c.tolerancesOf(h), h.Namespace, selector, metricSelector)
	if err != nil {
		return proposal{}, c.unableToCompute(h, "FailedGetPodsMetric", err), err
	}
	*status = autoscalingv2.MetricStatus{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricStatus{
		Metric:  autoscalingv2.MetricIdentifier{Name: spec.Pods.Metric.Name, Selector: spec.Pods.Metric.Selector},
		Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(usage, resource.DecimalSI)}}}
	return proposal{n, fmt.Sprintf("pods metric %s", spec.Pods.Metric.Name), ts}, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
}

func (c *Controller) objectMetric(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, specReplicas, statusReplicas int32,
	selector, metricSelector labels.Selector, status *autoscalingv2.MetricStatus) (proposal, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	o := spec.Object
	st := autoscalingv2.MetricStatus{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{
		DescribedObject: o.DescribedObject, Metric: autoscalingv2.MetricIdentifier{Name: o.Metric.Name, Selector: o.Metric.Selector}}}
	tol := c.tolerancesOf(h)
	switch {
	case o.Target.Type == autoscalingv2.ValueMetricType && o.Target.Value != nil:
		n, usage, ts, err := c.calc.objectReplicas(ctx, specReplicas, o.Target.Value.MilliValue(), o.Metric.Name, tol, h.Namespace, &o.DescribedObject, selector, metricSelector)
		if err != nil {
			return proposal{timestamp: ts}, c.unableToCompute(h, "FailedGetObjectMetric", err), err
		}
		st.Object.Current.Value = resource.NewMilliQuantity(usage, resource.DecimalSI)
		*status = st
		return proposal{n, fmt.Sprintf("%s metric %s", o.DescribedObject.Kind, o.Metric.Name), ts}, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
	case o.Target.Type == autoscalingv2.AverageValueMetricType && o.Target.AverageValue != nil:
		n, usage, ts, err := c.calc.objectPerPodReplicas(ctx, statusReplicas, o.Target.AverageValue.MilliValue(), o.Metric.Name, tol, h.Namespace, &o.DescribedObject, metricSelector)
		if err != nil {
			return proposal{}, c.unableToCompute(h, "FailedGetObjectMetric", err), fmt.Errorf("failed to get %s object metric: %w", o.Metric.Name, err)
		}
		st.Object.Current.AverageValue = resource.NewMilliQuantity(usage, resource.DecimalSI)
		*status = st
		return proposal{n, fmt.Sprintf("external metric %s(%+v)", o.Metric.Name, o.Metric.Selector), ts}, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
	}
	err := errors.New("invalid object metric source: neither a value target nor an average value target was set")
	return proposal{}, c.unableToCompute(h, "FailedGetObjectMetric", err), err
}

func (c *Controller) externalMetric(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, specReplicas, statusReplicas int32,
	selector labels.Selector, status *autoscalingv2.MetricStatus) (proposal, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	e := spec.External
	tol := c.tolerancesOf(h)
	name := fmt.Sprintf("external metric %s(%+v)", e.Metric.Name, e.Metric.Selector)
	st := func(v autoscalingv2.MetricValueStatus) autoscalingv2.MetricStatus {
		return autoscalingv2.MetricStatus{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{
			Metric: autoscalingv2.MetricIdentifier{Name: e.Metric.Name, Selector: e.Metric.Selector}, Current: v}}
	}
	switch {
	case e.Target.AverageValue != nil:
		n, usage, ts, err := c.calc.externalPerPodReplicas(ctx, statusReplicas, e.Target.AverageValue.MilliValue(), e.Metric.Name, tol, h.Namespace, e.Metric.Selector)
		if err != nil {
			return proposal{}, c.unableToCompute(h, "FailedGetExternalMetric", err), fmt.Errorf("failed to get %s external metric: %w", e.Metric.Name, err)
		}
		*status = st(autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(usage, resource.DecimalSI)})
		return proposal{n, name, ts}, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
	case e.Target.Value != nil:
		n, usage, ts, err := c.calc.externalReplicas(ctx, specReplicas, e.Target.Value.MilliValue(), e.Metric.Name, tol, h.Namespace, e.Metric.Selector, selector)
		if err != nil {
			return proposal{}, c.unableToCompute(h, "FailedGetExternalMetric", err), fmt.Errorf("failed to get external metric %s: %w", e.Metric.Name, err)
		}
		*status = st(autoscalingv2.MetricValueStatus{Value: resource.NewMilliQuantity(usage, resource.DecimalSI)})
		return proposal{n, name, ts}, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
	}
	err := errors.New("invalid external metric source: neither a value target nor an average value target was set")
	return proposal{}, c.unableToCompute(h, "FailedGetExternalMetric", err), err
}

// tolerancesOf are the controller's tolerance, replaced by the
// autoscaler's behavior's where it sets one.
func (c *Controller) tolerancesOf(h *autoscalingv2.HorizontalPodAutoscaler) tolerances {
	t := tolerances{c.tolerance, c.tolerance}
	b := h.Spec.Behavior
	if b == nil {
		return t
	}
	if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
		t.down = b.ScaleDown.Tolerance.AsApproximateFloat64()
	}
	if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
		t.up = b.ScaleUp.Tolerance.AsApproximateFloat64()
	}
	return t
}

// sourceMissing: the metric's type names a source the spec lacks (or a
// pods metric has no averageValue, the only target it reads).
func sourceMissing(spec autoscalingv2.MetricSpec) bool {
	switch spec.Type {
	case autoscalingv2.ObjectMetricSourceType:
		return spec.Object == nil
	case autoscalingv2.PodsMetricSourceType:
		return spec.Pods == nil || spec.Pods.Target.AverageValue == nil
	case autoscalingv2.ResourceMetricSourceType:
		return spec.Resource == nil
	case autoscalingv2.ContainerResourceMetricSourceType:
		return spec.ContainerResource == nil
	case autoscalingv2.ExternalMetricSourceType:
		return spec.External == nil
	}
	return false
}
