package e2e

import (
	"strings"
	"testing"
)

// hpaV1Policies are a validating and a mutating policy written against
// autoscaling/v1 HorizontalPodAutoscalers only, matching by Equivalent: a
// v2 request reaches them converted to v1, and the mutation comes back
// converted to v2.
const hpaV1Policies = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: cpu-cap}
spec:
  failurePolicy: Fail
  matchConstraints:
    matchPolicy: Equivalent
    resourceRules:
    - {apiGroups: [autoscaling], apiVersions: [v1], operations: [CREATE], resources: [horizontalpodautoscalers]}
  validations:
  - expression: "!has(object.spec.targetCPUUtilizationPercentage) || object.spec.targetCPUUtilizationPercentage <= 80"
    messageExpression: "'cpu target ' + string(object.spec.targetCPUUtilizationPercentage) + '% over 80% (seen as ' + object.apiVersion + ')'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: cpu-cap}
spec:
  policyName: cpu-cap
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: cpu-default}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    matchPolicy: Equivalent
    resourceRules:
    - {apiGroups: [autoscaling], apiVersions: [v1], operations: [CREATE], resources: [horizontalpodautoscalers]}
  matchConditions:
  - name: defaulted-cpu-target # v2 defaulting adds cpu at 80% before admission
    expression: "object.spec.targetCPUUtilizationPercentage == 80"
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{spec: Object.spec{targetCPUUtilizationPercentage: 70}}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: cpu-default}
spec:
  policyName: cpu-default
`

const hpaV2 = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: NAME}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 4
METRICS`

const cpuMetric = `  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: PERCENT}}
`

func hpaManifest(name, metrics string) string {
	return strings.NewReplacer("NAME", name, "METRICS", metrics).Replace(hpaV2)
}

func TestPoliciesSeeHorizontalPodAutoscalersThroughEquivalentVersions(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, hpaV1Policies, "apply", "-f", "-")

	// Validating: the v2 object is judged in its v1 form.
	_, errOut, err := a.Kubectl(t, hpaManifest("hot", strings.Replace(cpuMetric, "PERCENT", "90", 1)), "create", "-f", "-")
	// 422 Invalid, which kubectl prints from the details (kind = resource).
	want := `The horizontalpodautoscalers "hot" is invalid: : ValidatingAdmissionPolicy 'cpu-cap' with binding 'cpu-cap' denied request: cpu target 90% over 80% (seen as autoscaling/v1)`
	if err == nil || !strings.Contains(errOut, want) {
		t.Fatalf("create a v2 HPA at 90%%: err=%v stderr=%q, want %q", err, errOut, want)
	}
	a.MustKubectl(t, hpaManifest("cool", strings.Replace(cpuMetric, "PERCENT", "50", 1)), "create", "-f", "-")
	if got := a.MustKubectl(t, "", "get", "hpa.v2.autoscaling", "cool", "-o", "jsonpath={.spec.metrics[0].resource.target.averageUtilization}"); got != "50" {
		t.Errorf("stored target of cool = %q, want 50 (untouched)", got)
	}

	// Mutating: v2 defaulting gives a metric-less HPA cpu at 80% before
	// admission; the policy lowers it through the v1 field, and that is
	// stored as the v2 metric.
	a.MustKubectl(t, hpaManifest("plain", ""), "create", "-f", "-")
	if got := a.MustKubectl(t, "", "get", "hpa.v2.autoscaling", "plain", "-o", "jsonpath={.spec.metrics[0].resource.name} {.spec.metrics[0].resource.target.averageUtilization}"); got != "cpu 70" {
		t.Errorf("stored metric of plain = %q, want the policy's default %q", got, "cpu 70")
	}
}
