package printers

import (
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/internal/registry"
)

var (
	hpaSpecDoc, hpaStatusDoc = autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc(), autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()
	hpaV2                    = autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")
)

// hpaPrinter prints HorizontalPodAutoscalers of either served version in
// their v2 form, as upstream prints its internal version.
var hpaPrinter = printer{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		str("Reference", hpaSpecDoc["scaleTargetRef"]),
		str("Targets", hpaSpecDoc["metrics"]),
		str("MinPods", hpaSpecDoc["minReplicas"]),
		str("MaxPods", hpaSpecDoc["maxReplicas"]),
		str("Replicas", hpaStatusDoc["currentReplicas"]),
		ageColumn,
	},
	row: func(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
		h, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
		if !ok {
			v2, err := registry.ConvertTo(obj, hpaV2)
			if err != nil {
				return metav1.TableRow{}, err
			}
			h = v2.(*autoscalingv2.HorizontalPodAutoscaler)
		}
		minPods := "<unset>"
		if h.Spec.MinReplicas != nil {
			minPods = fmt.Sprint(*h.Spec.MinReplicas)
		}
		ref := h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name
		return metav1.TableRow{Cells: []any{h.Name, ref, formatHPAMetrics(h.Spec.Metrics, h.Status.CurrentMetrics), minPods,
			int64(h.Spec.MaxReplicas), int64(h.Status.CurrentReplicas), since(h.CreationTimestamp, now)}}, nil
	},
}

// formatHPAMetrics is upstream's: "current/target" per metric, two at most
// (a missing current quantity prints as upstream's "<nil>").
func formatHPAMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	var list []string
	for i, spec := range specs {
		var status *autoscalingv2.MetricStatus
		if i < len(statuses) {
			status = &statuses[i]
		}
		list = append(list, formatHPAMetric(spec, status))
	}
	const maximum = 2
	if len(list) > maximum {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:maximum], ", "), len(list)-maximum)
	}
	return strings.Join(list, ", ")
}

func formatHPAMetric(spec autoscalingv2.MetricSpec, st *autoscalingv2.MetricStatus) string {
	current := "<unknown>"
	switch {
	case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
		return valueOrAverage(spec.External.Target, st != nil && st.External != nil, func() autoscalingv2.MetricValueStatus { return st.External.Current })
	case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
		if st != nil && st.Pods != nil {
			current = st.Pods.Current.AverageValue.String()
		}
		return current + "/" + spec.Pods.Target.AverageValue.String()
	case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
		return valueOrAverage(spec.Object.Target, st != nil && st.Object != nil, func() autoscalingv2.MetricValueStatus { return st.Object.Current })
	case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
		has := st != nil && st.Resource != nil
		return spec.Resource.Name.String() + ": " + resourceTarget(spec.Resource.Target, has, func() autoscalingv2.MetricValueStatus { return st.Resource.Current })
	case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
		has := st != nil && st.ContainerResource != nil
		return spec.ContainerResource.Name.String() + ": " + resourceTarget(spec.ContainerResource.Target, has, func() autoscalingv2.MetricValueStatus { return st.ContainerResource.Current })
	}
	return "<unknown type>"
}

func valueOrAverage(target autoscalingv2.MetricTarget, has bool, cur func() autoscalingv2.MetricValueStatus) string {
	current := "<unknown>"
	if target.AverageValue != nil {
		if has && cur().AverageValue != nil {
			current = cur().AverageValue.String()
		}
		return current + "/" + target.AverageValue.String() + " (avg)"
	}
	if has {
		current = cur().Value.String()
	}
	return current + "/" + target.Value.String()
}

func resourceTarget(target autoscalingv2.MetricTarget, has bool, cur func() autoscalingv2.MetricValueStatus) string {
	current := "<unknown>"
	if target.AverageValue != nil {
		if has {
			current = cur().AverageValue.String()
		}
		return current + "/" + target.AverageValue.String()
	}
	if has && cur().AverageUtilization != nil {
		current = fmt.Sprintf("%d%%", *cur().AverageUtilization)
	}
	want := "<auto>"
	if target.AverageUtilization != nil {
		want = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return current + "/" + want
}
