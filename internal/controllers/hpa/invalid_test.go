package hpa

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// A metric whose type names a source the spec lacks (validation refuses
// it; one written to storage directly may still hold it) is reported, not
// dereferenced.
func TestSourceMissing(t *testing.T) {
	for _, tc := range []struct {
		spec autoscalingv2.MetricSpec
		want bool
	}{
		{autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType}, true},
		{autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{}}, true},
		{autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType}, true},
		{autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType}, true},
		{autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType}, true},
		{autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType}, true},
		{autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu"}}, false},
		{autoscalingv2.MetricSpec{Type: "Bogus"}, false},
	} {
		if got := sourceMissing(tc.spec); got != tc.want {
			t.Errorf("sourceMissing(%+v) = %v, want %v", tc.spec, got, tc.want)
		}
	}
}
