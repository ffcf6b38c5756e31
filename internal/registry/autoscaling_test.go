package registry

import (
	"encoding/json"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

const fullHPAv2 = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: default, annotations: {keep: me}}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}
  - type: Pods
    pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: "1k"}}
  - type: Object
    object:
      describedObject: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: main}
      metric: {name: rps}
      target: {type: Value, value: "10k"}
  - type: External
    external: {metric: {name: queue}, target: {type: AverageValue, averageValue: "30"}}
  - type: ContainerResource
    containerResource: {name: cpu, container: app, target: {type: Utilization, averageUtilization: 60}}
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
status:
  currentReplicas: 3
  desiredReplicas: 4
  currentMetrics:
  - type: Resource
    resource: {name: cpu, current: {averageUtilization: 65, averageValue: 130m}}
  conditions:
  - {type: AbleToScale, status: "True", reason: ReadyForNewScale, message: ok}
`

func TestHPARoundTripsThroughV1(t *testing.T) {
	var in autoscalingv2.HorizontalPodAutoscaler
	if err := yaml.UnmarshalStrict([]byte(fullHPAv2), &in); err != nil {
		t.Fatal(err)
	}
	var v1 autoscalingv1.HorizontalPodAutoscaler
	if err := Scheme().Convert(&in, &v1, nil); err != nil {
		t.Fatalf("v2 → v1: %v", err)
	}
	if v1.Spec.TargetCPUUtilizationPercentage == nil || *v1.Spec.TargetCPUUtilizationPercentage != 70 ||
		v1.Status.CurrentCPUUtilizationPercentage == nil || *v1.Status.CurrentCPUUtilizationPercentage != 65 {
		t.Errorf("v1 CPU fields: target %v current %v, want 70 and 65", v1.Spec.TargetCPUUtilizationPercentage, v1.Status.CurrentCPUUtilizationPercentage)
	}
	var others []autoscalingv1.MetricSpec
	if err := json.Unmarshal([]byte(v1.Annotations[hpaMetricSpecsAnnotation]), &others); err != nil || len(others) != 5 {
		t.Errorf("metrics annotation = %q (%v), want the five non-CPU-utilization metrics", v1.Annotations[hpaMetricSpecsAnnotation], err)
	}
	if v1.Annotations["keep"] != "me" || v1.Annotations[hpaConditionsAnnotation] == "" || v1.Annotations[hpaMetricStatusesAnnotation] == "" {
		t.Errorf("v1 annotations = %v", v1.Annotations)
	}

	back, err := ConvertTo(&v1, in.GroupVersionKind())
	if err != nil {
		t.Fatalf("v1 → v2: %v", err)
	}
	if !apiequality.Semantic.DeepEqual(back, &in) {
		a, _ := yaml.Marshal(back)
		t.Errorf("round trip through v1 changed the object:\n%s", a)
	}
}

func TestHPAV1Defaults(t *testing.T) {
	v1 := &autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3}}
	defaultHPA(v1)
	if *v1.Spec.MinReplicas != 1 || *v1.Spec.TargetCPUUtilizationPercentage != 80 {
		t.Errorf("v1 defaults: min %d cpu %d, want 1 and 80", *v1.Spec.MinReplicas, *v1.Spec.TargetCPUUtilizationPercentage)
	}
	v2 := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
		Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{}}}
	defaultHPA(v2)
	if len(v2.Spec.Metrics) != 1 || *v2.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 ||
		len(v2.Spec.Behavior.ScaleUp.Policies) != 2 || v2.Spec.Behavior.ScaleDown.StabilizationWindowSeconds != nil {
		t.Errorf("v2 defaults = %+v", v2.Spec)
	}
}

func TestHPAValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		hpa  autoscalingv1.HorizontalPodAutoscaler
		want string
	}{
		{"valid", autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 2,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}}}, ""},
		{"bounds", autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 2, MinReplicas: &[]int32{3}[0],
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}}}, "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"},
		{"reference", autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 0}},
			"[spec.maxReplicas: Invalid value: 0: must be greater than 0, spec.scaleTargetRef.kind: Required value, spec.scaleTargetRef.name: Required value]"},
	} {
		got := ""
		if agg := validateHPA(&tc.hpa).ToAggregate(); agg != nil {
			got = agg.Error()
		}
		if got != tc.want {
			t.Errorf("%s: validateHPA = %q, want %q", tc.name, got, tc.want)
		}
	}
}
