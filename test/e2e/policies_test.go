package e2e

import (
	"os"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"path/filepath"
	"strings"
	"testing"
)

const replicaLimitPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replica-limit}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: "object.spec.replicas <= int(params.data.maxReplicas)"
    messageExpression: "'replicas must be no greater than ' + params.data.maxReplicas"
    reason: Invalid
`

const replicaLimitBinding = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replica-limit}
spec:
  policyName: replica-limit
  validationActions: [ACTIONS]
  paramRef: {name: replica-limit, namespace: default, parameterNotFoundAction: Deny}
`

// TestKubectlPolicyWithParams: a policy with a ConfigMap param denies a
// Deployment with too many replicas; with actions [Warn, Audit] the same
// failure becomes a kubectl warning and an audit annotation.
func TestKubectlPolicyWithParams(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(dir, "audit.log")
	a := startAdmitd(t, filepath.Join(dir, "data"), "--audit-log-path", auditLog, "--audit-policy-file", policy)
	a.MustKubectl(t, "", "create", "configmap", "replica-limit", "--from-literal=maxReplicas=3")
	a.MustKubectl(t, replicaLimitPolicy, "apply", "-f", "-")
	a.MustKubectl(t, strings.Replace(replicaLimitBinding, "ACTIONS", "Deny", 1), "apply", "-f", "-")

	_, errOut, err := a.Kubectl(t, "", "create", "deployment", "big", "--image=nginx", "--replicas=5")
	want := `deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: replicas must be no greater than 3`
	if err == nil || !strings.Contains(errOut, want) {
		t.Fatalf("create deployment with 5 replicas: err=%v stderr=%q, want %q", err, errOut, want)
	}
	a.MustKubectl(t, "", "create", "deployment", "small", "--image=nginx", "--replicas=2")

	a.MustKubectl(t, strings.Replace(replicaLimitBinding, "ACTIONS", "Warn, Audit", 1), "apply", "-f", "-")
	_, errOut, err = a.Kubectl(t, "", "create", "deployment", "warned", "--image=nginx", "--replicas=5")
	if err != nil {
		t.Fatalf("create with [Warn, Audit]: %v: %s", err, errOut)
	}
	wantWarning := `Warning: Validation failed for ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit': replicas must be no greater than 3`
	if !strings.Contains(errOut, wantWarning) {
		t.Errorf("kubectl stderr = %q, want the warning %q", errOut, wantWarning)
	}
	waitForAuditAnnotation(t, auditLog, "validation.policy.admission.k8s.io/validation_failure")
}

const labelPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: add-owner}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{metadata: Object.metadata{labels: {'owner': 'policy'}}}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: add-owner}
spec:
  policyName: add-owner
`

// TestKubectlMutatingPolicySeenByWebhook: a MutatingAdmissionPolicy sets a
// label that a validating webhook then sees.
func TestKubectlMutatingPolicySeenByWebhook(t *testing.T) {
	t.Parallel()
	hooks := startWebhookServer(t, func(_ string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		if !strings.Contains(string(req.Object.Raw), `"owner":"policy"`) {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "the owner label is missing"}}
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	a := startAdmitd(t, t.TempDir())
	a.MustKubectl(t, labelPolicy, "apply", "-f", "-")
	a.MustKubectl(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: owner-check}
webhooks:
- name: owner.e2e.admitd.io
  clientConfig: {url: "`+hooks.url+`/validate", caBundle: "`+hooks.caBundle+`"}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  sideEffects: None
  admissionReviewVersions: [v1]
`, "apply", "-f", "-")
	a.MustKubectl(t, "", "create", "configmap", "labelled", "--from-literal=a=b")
	if got := a.MustKubectl(t, "", "get", "configmap", "labelled", "-o", "jsonpath={.metadata.labels.owner}"); got != "policy" {
		t.Fatalf("stored label owner = %q, want policy", got)
	}
}
