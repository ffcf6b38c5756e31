package podsecurity

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/admissiontest"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := admission.NewRegistry()
	Register(r, Options{Metrics: reg})
	c := newCluster(ns("base", "enforce", "baseline"), ns("plain"))
	pc := admission.PluginContext{Namespaces: c, Cache: c}
	// Built twice (as a server rebuilding its chain would), registered once.
	if _, err := r.NewChain([]string{Name}, pc, nil); err != nil {
		t.Fatalf("NewChain() = %v", err)
	}
	chain, err := r.NewChain([]string{Name}, pc, nil)
	if err != nil {
		t.Fatalf("NewChain() = %v", err)
	}
	for _, a := range []*admission.Attributes{
		admissiontest.Create(pod("base", "p", hostNetwork)).Attributes(),
		admissiontest.Create(pod("plain", "p")).Attributes(),
		admissiontest.Create(pod("gone", "p")).Attributes(),
	} {
		_ = chain.Validate(t.Context(), a)
	}
	want := `
# HELP pod_security_errors_total [ALPHA] Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation.
# TYPE pod_security_errors_total counter
pod_security_errors_total{fatal="true",request_operation="create",resource="pod",subresource=""} 1
# HELP pod_security_evaluations_total [ALPHA] Number of policy evaluations that occurred, not counting ignored or exempt requests.
# TYPE pod_security_evaluations_total counter
pod_security_evaluations_total{decision="allow",mode="enforce",policy_level="privileged",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1
pod_security_evaluations_total{decision="allow",mode="enforce",policy_level="privileged",policy_version="latest",request_operation="update",resource="pod",subresource=""} 0
pod_security_evaluations_total{decision="deny",mode="enforce",policy_level="baseline",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "pod_security_evaluations_total", "pod_security_errors_total"); err != nil {
		t.Error(err)
	}
}
