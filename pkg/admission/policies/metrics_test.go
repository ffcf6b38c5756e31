package policies_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/policies"
)

// TestMetrics runs cases with metrics and checks upstream's counters.
func TestMetrics(t *testing.T) {
	cases := []struct {
		name, want string
	}{
		{"spec-15-audit-warn", `
apiserver_validating_admission_policy_check_total{enforcement_action="audit",error_type="invalid_error",policy="p1",policy_binding="b1"} 2
apiserver_validating_admission_policy_check_total{enforcement_action="warn",error_type="invalid_error",policy="p1",policy_binding="b1"} 2
`},
		{"spec-08-runtime-error-ignore", `
apiserver_validating_admission_policy_check_total{enforcement_action="allow",error_type="invalid_error",policy="p1",policy_binding="b1"} 1
`},
		{"spec-09-compile-error", `
apiserver_validating_admission_policy_check_total{enforcement_action="deny",error_type="compile_error",policy="p1",policy_binding="b1"} 1
`},
		{"mapspec-109-two-failing-policies", `
apiserver_mutating_admission_policy_check_total{error_type="invalid_error",policy="m1",policy_binding="b1"} 1
apiserver_mutating_admission_policy_check_total{error_type="invalid_error",policy="m2",policy_binding="b2"} 1
`},
		{"mapspec-083-order", `
apiserver_mutating_admission_policy_check_total{error_type="no_error",policy="m1",policy_binding="b1"} 2
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gc := readCase(t, "testdata/"+c.name+"/case.yaml")
			reg := prometheus.NewRegistry()
			store, snap := newObjectStore(), &policies.Snapshot{}
			for _, raw := range gc.Objects {
				addObject(t, store, snap, raw, !gc.NoDefaults)
			}
			o := policies.Options{Source: policies.StaticSource{Snapshot: snap}, Params: store, Metrics: policies.NewMetrics(reg)}
			pc := admission.PluginContext{Namespaces: store, Schema: fakeSchema{}, Authorizer: denySecrets}
			m, _ := policies.NewMutating(o, pc)
			v, _ := policies.NewValidating(o, pc)
			a := gc.Request.attributes(t)
			_ = m.Admit(context.Background(), a)
			_ = v.Validate(context.Background(), a)
			if got, want := counters(t, reg), strings.TrimSpace(c.want); got != want {
				t.Errorf("counters:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// counters renders the check_total counters, one line per series.
func counters(t *testing.T, reg *prometheus.Registry) string {
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range families {
		if !strings.HasSuffix(f.GetName(), "_check_total") {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			lines = append(lines, fmt.Sprintf("%s{%s} %v", f.GetName(), strings.Join(labels, ","), m.GetCounter().GetValue()))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
