package e2e

import (
	"strings"
	"testing"

	"github.com/admitd/admitd/test/e2e/harness"
)

// betaMutatingPolicy is a MutatingAdmissionPolicy and its binding written
// as admissionregistration.k8s.io/v1beta1: they label every new ConfigMap.
const betaMutatingPolicy = `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata:
  name: add-label
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{labels: {"mutated": "yes"}}}
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: add-label
spec:
  policyName: add-label
`

// What kube-apiserver 1.37.2 answered (../shared/tools/kube-apiserver,
// kubectl 1.37): kubectl apply of betaMutatingPolicy without
// --runtime-config, and the warnings of each request of the v1beta1
// resources with --runtime-config=admissionregistration.k8s.io/v1beta1=true.
const (
	betaPolicyRefused = `resource mapping not found for name: "add-label" namespace: "" from "STDIN": no matches for kind "MutatingAdmissionPolicy" in version "admissionregistration.k8s.io/v1beta1"
ensure CRDs are installed first
resource mapping not found for name: "add-label" namespace: "" from "STDIN": no matches for kind "MutatingAdmissionPolicyBinding" in version "admissionregistration.k8s.io/v1beta1"
ensure CRDs are installed first
`
	betaPolicyApplied = `Warning: admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy is deprecated in v1.37+, unavailable in v1.40+; use admissionregistration.k8s.io/v1 MutatingAdmissionPolicy
Warning: admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicyBinding is deprecated in v1.37+, unavailable in v1.40+; use admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding
`
	betaDiscovery = `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"admissionregistration.k8s.io/v1beta1","resources":[{"name":"mutatingadmissionpolicies","singularName":"mutatingadmissionpolicy","namespaced":false,"kind":"MutatingAdmissionPolicy","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"categories":["api-extensions"],"storageVersionHash":"mHCkTKpUTrE="},{"name":"mutatingadmissionpolicybindings","singularName":"mutatingadmissionpolicybinding","namespaced":false,"kind":"MutatingAdmissionPolicyBinding","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"categories":["api-extensions"],"storageVersionHash":"ZKgZT1uTmZ0="}]}`
)

// TestRuntimeConfigServesBetaMutatingPolicies: under
// --runtime-config=admissionregistration.k8s.io/v1beta1=true a v1beta1
// MutatingAdmissionPolicy and binding apply (with kube-apiserver's
// deprecation warnings), are in discovery and OpenAPI, read back through
// v1 defaulted as upstream stores them, and mutate ConfigMaps; without
// the flag kubectl refuses them as against kube-apiserver.
func TestRuntimeConfigServesBetaMutatingPolicies(t *testing.T) {
	t.Parallel()
	a := startAdmitd(t, t.TempDir(), "--storage", "memory", withoutWorkloadControllers,
		"--runtime-config=admissionregistration.k8s.io/v1beta1=true")
	out, stderr, err := a.Kubectl(t, betaMutatingPolicy, "apply", "-f", "-")
	if err != nil || stderr != betaPolicyApplied {
		t.Fatalf("kubectl apply of v1beta1 policy: %v\nstdout: %s\nstderr: %s\nwant stderr:\n%s", err, out, stderr, betaPolicyApplied)
	}
	if want := "mutatingadmissionpolicy.admissionregistration.k8s.io/add-label created\nmutatingadmissionpolicybinding.admissionregistration.k8s.io/add-label created\n"; out != want {
		t.Errorf("kubectl apply = %q, want %q", out, want)
	}
	got := a.MustKubectl(t, "", "get", "mutatingadmissionpolicies.v1.admissionregistration.k8s.io", "add-label",
		"-o", "jsonpath={.apiVersion} {.spec.matchConstraints.matchPolicy} {.spec.matchConstraints.resourceRules[0].scope} {.spec.failurePolicy}")
	if got != "admissionregistration.k8s.io/v1 Equivalent * Fail" {
		t.Errorf("policy read through v1 = %q, want %q", got, "admissionregistration.k8s.io/v1 Equivalent * Fail")
	}
	if got := a.MustKubectl(t, "", "get", "--raw", "/apis/admissionregistration.k8s.io/v1beta1"); strings.TrimSpace(got) != betaDiscovery {
		t.Errorf("discovery of v1beta1:\n got %s\nwant %s", got, betaDiscovery)
	}
	if got := a.MustKubectl(t, "", "get", "--raw", "/openapi/v3"); !strings.Contains(got, `"apis/admissionregistration.k8s.io/v1beta1"`) {
		t.Errorf("/openapi/v3 does not list admissionregistration.k8s.io/v1beta1: %s", got)
	}
	a.MustKubectl(t, "", "create", "configmap", "c")
	if got := a.MustKubectl(t, "", "get", "configmap", "c", "-o", "jsonpath={.metadata.labels.mutated}"); got != "yes" {
		t.Errorf("ConfigMap label from the v1beta1 policy = %q, want yes", got)
	}

	plain := startAdmitd(t, t.TempDir(), "--storage", "memory", withoutWorkloadControllers)
	out, stderr, err = plain.Kubectl(t, betaMutatingPolicy, "apply", "-f", "-")
	if err == nil || stderr != betaPolicyRefused {
		t.Errorf("kubectl apply without --runtime-config: %v\nstdout: %s\nstderr: %s\nwant stderr:\n%s", err, out, stderr, betaPolicyRefused)
	}
}

// TestRuntimeConfigRefusedAsUpstream: admitd serve stops on the values
// kube-apiserver 1.37.2 stops on, with its messages (recorded from it).
func TestRuntimeConfigRefusedAsUpstream(t *testing.T) {
	t.Parallel()
	for value, want := range map[string]string{
		"foo.example.com/v1=true": "unknown api groups foo.example.com/v1",
		"apps/v9=true":            "group version apps/v9 that has not been registered",
		"apps/v1=maybe":           `invalid value of apps/v1: maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax`,
	} {
		a, err := harness.TryStart(t.TempDir(), "--storage", "memory", "--runtime-config="+value)
		if err == nil {
			a.Stop()
			t.Errorf("admitd serve --runtime-config=%s started", value)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("admitd serve --runtime-config=%s: %v, want %q", value, err, want)
		}
	}
}
