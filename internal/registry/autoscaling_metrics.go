package registry

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The metric conversions of upstream's autoscaling/v1 conversion.go: v1
// keeps v2beta1's flat shapes (targetAverageValue, metricName, ...) for the
// annotations, v2 nests targets and identifiers.

func metricSpecToV1(in autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		out.Object = &autoscalingv1.ObjectMetricSource{Target: autoscalingv1.CrossVersionObjectReference(o.DescribedObject),
			MetricName: o.Metric.Name, Selector: o.Metric.Selector, AverageValue: o.Target.AverageValue}
		if o.Target.Value != nil {
			out.Object.TargetValue = *o.Target.Value
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv1.PodsMetricSource{MetricName: p.Metric.Name, Selector: p.Metric.Selector}
		if p.Target.AverageValue != nil {
			out.Pods.TargetAverageValue = *p.Target.AverageValue
		}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{Name: r.Name, TargetAverageUtilization: r.Target.AverageUtilization, TargetAverageValue: r.Target.AverageValue}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{Name: c.Name, Container: c.Container,
			TargetAverageUtilization: c.Target.AverageUtilization, TargetAverageValue: c.Target.AverageValue}
	}
	if e := in.External; e != nil {
		out.External = &autoscalingv1.ExternalMetricSource{MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector,
			TargetValue: e.Target.Value, TargetAverageValue: e.Target.AverageValue}
	}
	return out
}

func metricSpecFromV1(in autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantityPtr(o.TargetValue), AverageValue: o.AverageValue}
		if o.AverageValue != nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.Object = &autoscalingv2.ObjectMetricSource{DescribedObject: autoscalingv2.CrossVersionObjectReference(o.Target),
			Metric: autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector}, Target: t}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: p.MetricName, Selector: p.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantityPtr(p.TargetAverageValue)}}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: r.Name, Target: resourceTarget(r.TargetAverageUtilization, r.TargetAverageValue)}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: c.Name, Container: c.Container,
			Target: resourceTarget(c.TargetAverageUtilization, c.TargetAverageValue)}
	}
	if e := in.External; e != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: e.TargetValue, AverageValue: e.TargetAverageValue}
		if e.TargetAverageValue != nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector}, Target: t}
	}
	return out
}

func resourceTarget(utilization *int32, averageValue *resource.Quantity) autoscalingv2.MetricTarget {
	t := autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: utilization, AverageValue: averageValue}
	if utilization == nil {
		t.Type = autoscalingv2.AverageValueMetricType
	}
	return t
}

func quantityPtr(q resource.Quantity) *resource.Quantity { return &q }

func metricStatusToV1(in autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		out.Object = &autoscalingv1.ObjectMetricStatus{Target: autoscalingv1.CrossVersionObjectReference(o.DescribedObject),
			MetricName: o.Metric.Name, Selector: o.Metric.Selector, AverageValue: copyQuantity(o.Current.AverageValue)}
		if o.Current.Value != nil {
			out.Object.CurrentValue = *o.Current.Value
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv1.PodsMetricStatus{MetricName: p.Metric.Name, Selector: p.Metric.Selector}
		if p.Current.AverageValue != nil {
			out.Pods.CurrentAverageValue = *p.Current.AverageValue
		}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv1.ResourceMetricStatus{Name: r.Name, CurrentAverageUtilization: r.Current.AverageUtilization}
		if r.Current.AverageValue != nil {
			out.Resource.CurrentAverageValue = *r.Current.AverageValue
		}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{Name: c.Name, Container: c.Container, CurrentAverageUtilization: c.Current.AverageUtilization}
		if c.Current.AverageValue != nil {
			out.ContainerResource.CurrentAverageValue = *c.Current.AverageValue
		}
	}
	if e := in.External; e != nil {
		out.External = &autoscalingv1.ExternalMetricStatus{MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector, CurrentAverageValue: copyQuantity(e.Current.AverageValue)}
		if e.Current.Value != nil {
			out.External.CurrentValue = *e.Current.Value
		}
	}
	return out
}

func copyQuantity(q *resource.Quantity) *resource.Quantity {
	if q == nil {
		return nil
	}
	c := q.DeepCopy()
	return &c
}

func metricStatusFromV1(in autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{DescribedObject: autoscalingv2.CrossVersionObjectReference(o.Target),
			Metric:  autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector},
			Current: autoscalingv2.MetricValueStatus{Value: quantityPtr(o.CurrentValue), AverageValue: o.AverageValue}}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: p.MetricName, Selector: p.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: quantityPtr(p.CurrentAverageValue)}}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: r.Name,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: r.CurrentAverageUtilization, AverageValue: quantityPtr(r.CurrentAverageValue)}}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: c.Name, Container: c.Container,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: c.CurrentAverageUtilization, AverageValue: quantityPtr(c.CurrentAverageValue)}}
	}
	if e := in.External; e != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector},
			Current: autoscalingv2.MetricValueStatus{Value: quantityPtr(e.CurrentValue), AverageValue: e.CurrentAverageValue}}
	}
	return out
}
