package registry

import (
	"encoding/json"
	"strings"
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
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}}, ""},
		{"replication controller in v1", autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 2,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "ReplicationController", Name: "web"}}}, ""},
		{"bounds", autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 2, MinReplicas: &[]int32{3}[0],
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}}, "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"},
		{"reference", autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 0}},
			"[spec.scaleTargetRef.kind: Required value, spec.scaleTargetRef.name: Required value, spec.scaleTargetRef.apiVersion: Invalid value: \"\": apiVersion must specify API group, spec.maxReplicas: Required value]"},
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

// The v2 specs below and the errors kube-apiserver 1.37.2 answered for
// them (its declarative validation's bounds included); the order of the
// "populate the given metric source only" pair is a map's there.
func TestHPAValidationRecorded(t *testing.T) {
	const target = `"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"w"}`
	for _, tc := range []struct{ spec, want string }{
		{`{"maxReplicas":0,` + target + `}`, "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`\nspec.maxReplicas: Required value"},
		{`{"maxReplicas":-1,"minReplicas":-2,` + target + `}`,
			"spec.minReplicas: Invalid value: -2: must be greater than or equal to 0\nspec.maxReplicas: Invalid value: -1: must be greater than or equal to 1"},
		{`{"minReplicas":-1,"maxReplicas":0,"scaleTargetRef":{"apiVersion":"v1","kind":"Deployment","name":""}}`,
			"spec.scaleTargetRef.name: Required value\nspec.scaleTargetRef.apiVersion: Invalid value: \"v1\": apiVersion must specify API group\n" +
				"spec.minReplicas: Invalid value: -1: must be greater than or equal to 0\nspec.maxReplicas: Required value"},
		{`{"maxReplicas":2,"scaleTargetRef":{"apiVersion":"a/b/c","kind":"Deployment","name":"r"}}`,
			`spec.scaleTargetRef.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`},
		{`{"minReplicas":0,"maxReplicas":3,` + target + `}`,
			"spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas"},
		{`{"minReplicas":0,"maxReplicas":3,` + target + `,"metrics":[{"type":"External","external":{"metric":{"name":"q"},"target":{"type":"Value","value":"1"}}}]}`, ""},
		{`{"maxReplicas":3,` + target + `,"metrics":[{"type":"Pods"}]}`,
			"spec.metrics[0].pods: Required value: must populate information for the given metric source"},
		{`{"maxReplicas":3,` + target + `,"metrics":[{"type":"Bogus","pods":{"metric":{"name":"x"},"target":{"type":"AverageValue","averageValue":"1"}},"resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":0}}}]}`,
			"spec.metrics[0].type: Unsupported value: \"Bogus\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"\n" +
				"spec.metrics[0].pods: Forbidden: must populate the given metric source only\nspec.metrics[0].resource: Forbidden: must populate the given metric source only"},
		{`{"maxReplicas":3,` + target + `,"behavior":{"scaleUp":{"policies":[],"selectPolicy":"X","stabilizationWindowSeconds":4000}}}`,
			"spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600\n" +
				"spec.behavior.scaleUp.selectPolicy: Unsupported value: \"X\": supported values: \"Disabled\", \"Max\", \"Min\"\n" +
				"spec.behavior.scaleUp.policies: Required value: must specify at least one Policy"},
		{`{"maxReplicas":3,` + target + `,"metrics":[{"type":"Pods","pods":{"metric":{"name":"x"},"target":{"type":"Utilization"}}},` +
			`{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":0}}},` +
			`{"type":"ContainerResource","containerResource":{"name":"cpu","container":"Bad_C","target":{"type":"AverageValue","averageValue":"-1"}}},` +
			`{"type":"External","external":{"metric":{"name":"a/b"},"target":{"type":"Value","value":"1","averageValue":"1"}}},` +
			`{"type":"Object","object":{"describedObject":{"kind":"","name":"x"},"metric":{"name":"m"},"target":{"type":"Value"}}}]}`,
			"spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue\n" +
				"spec.metrics[1].resource.target.averageUtilization: Invalid value: 0: must be greater than 0\n" +
				"spec.metrics[2].containerResource.container: Invalid value: \"Bad_C\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\n" +
				"spec.metrics[2].containerResource.target.averageValue: Invalid value: \"-1\": must be positive\n" +
				"spec.metrics[3].external.metric.name: Invalid value: \"a/b\": may not contain '/'\n" +
				"spec.metrics[3].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target\n" +
				"spec.metrics[4].object.describedObject.kind: Required value\n" +
				"spec.metrics[4].object.target.averageValue: Required value: must set either a target value or averageValue"},
		{`{"maxReplicas":3,` + target + `,"behavior":{"scaleDown":{"policies":[{"type":"Foo","value":0,"periodSeconds":2000}]}}}`,
			"spec.behavior.scaleDown.policies[0].type: Unsupported value: \"Foo\": supported values: \"Percent\", \"Pods\"\n" +
				"spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero\n" +
				"spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 2000: must be less than or equal to 1800"},
	} {
		h := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := json.Unmarshal([]byte(`{"spec":`+tc.spec+`}`), h); err != nil {
			t.Fatal(err)
		}
		defaultHPA(h)
		var got []string
		seen := map[string]bool{}
		for _, e := range validateHPA(h) {
			if s := e.Error(); !seen[s] { // kube-apiserver's message lists each error once
				seen[s] = true
				got = append(got, s)
			}
		}
		if strings.Join(got, "\n") != tc.want {
			t.Errorf("%s:\n got  %s\n want %s", tc.spec, strings.Join(got, "\n  "), strings.ReplaceAll(tc.want, "\n", "\n  "))
		}
	}
}
