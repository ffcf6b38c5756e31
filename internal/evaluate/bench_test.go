package evaluate

import (
	"context"
	"testing"
)

// BenchmarkRun is one evaluation from start to end: an in-process server
// started, a namespace, a policy and its binding created, a ConfigMap
// created and denied, the trace read, the server stopped.
func BenchmarkRun(b *testing.B) {
	objs := objectsOf(b, `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-cm}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  validations: [{expression: "false", message: nope}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-cm}
spec: {policyName: no-cm, validationActions: [Deny]}`)
	cm := configMap("c")
	cm.SetNamespace("team-a")
	b.ReportAllocs()
	for b.Loop() {
		r, err := Run(context.Background(), Input{Objects: objs, Request: Request{Object: cm}})
		if err != nil || r.Decision != "Denied" {
			b.Fatalf("Run = %v, %v", r, err)
		}
	}
}
