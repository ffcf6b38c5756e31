package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
)

func TestKubectlHorizontalPodAutoscalerVersions(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, "", "create", "deployment", "web", "--image=nginx")
	// kubectl autoscale writes autoscaling/v1 (targetCPUUtilizationPercentage).
	a.MustKubectl(t, "", "autoscale", "deployment", "web", "--max=5", "--cpu-percent=60")
	out := a.MustKubectl(t, "", "get", "hpa")
	// REPLICAS is 0 until the horizontal pod autoscaler's first
	// reconciliation writes the target's 1 (its CPU stays <unknown>: no
	// metrics API is served).
	if f := fields(out, "web"); len(f) < 7 || strings.Join(f[:6], " ") != "web Deployment/web cpu: <unknown>/60% 1 5" || (f[6] != "0" && f[6] != "1") {
		t.Errorf("kubectl get hpa = %q", out)
	}
	// The preferred version is v2, which stores it.
	if got := a.MustKubectl(t, "", "get", "hpa", "web", "-o", "jsonpath={.apiVersion} {.spec.metrics[0].resource.target.averageUtilization}"); got != "autoscaling/v2 60" {
		t.Errorf("HPA as v2 = %q", got)
	}

	// A v2 object with a metric v1 cannot express reads back through v1 with
	// it in the round-trip annotation.
	a.MustKubectl(t, `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: api}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 4
  metrics:
  - type: Resource
    resource: {name: memory, target: {type: AverageValue, averageValue: 200Mi}}
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
`, "apply", "-f", "-")
	var v1 autoscalingv1.HorizontalPodAutoscaler
	raw := a.MustKubectl(t, "", "get", "--raw", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/api")
	if err := json.Unmarshal([]byte(raw), &v1); err != nil {
		t.Fatal(err)
	}
	if v1.Spec.TargetCPUUtilizationPercentage == nil || *v1.Spec.TargetCPUUtilizationPercentage != 50 ||
		!strings.Contains(v1.Annotations["autoscaling.alpha.kubernetes.io/metrics"], "memory") {
		t.Errorf("v2 HPA read through v1 = %s", raw)
	}
	out = a.MustKubectl(t, "", "get", "hpa", "api")
	if !strings.Contains(out, "memory: <unknown>/200Mi, cpu: <unknown>/50%") {
		t.Errorf("kubectl get hpa api = %q", out)
	}
	if out := a.MustKubectl(t, "", "explain", "hpa.spec.targetCPUUtilizationPercentage", "--api-version=autoscaling/v1"); !strings.Contains(out, "VERSION:    v1") {
		t.Errorf("kubectl explain --api-version=autoscaling/v1 = %q", out)
	}
}
