package webhooks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/match"
)

const (
	errorsHelp = `# HELP apiserver_admission_match_condition_evaluation_errors_total [ALPHA] Admission match condition evaluation errors count, identified by name of resource containing the match condition and broken out for each kind containing matchConditions (webhook or policy), operation and admission type (validate or admit).
# TYPE apiserver_admission_match_condition_evaluation_errors_total counter
`
	exclusionsHelp = `# HELP apiserver_admission_match_condition_exclusions_total [ALPHA] Admission match condition evaluation exclusions count, identified by name of resource containing the match condition and broken out for each kind containing matchConditions (webhook or policy), operation and admission type (validate or admit).
# TYPE apiserver_admission_match_condition_exclusions_total counter
`
)

// runConditions runs shouldCall for h in a dispatcher named plugin with
// metrics on a private registry.
func runConditions(t *testing.T, plugin string, h *hook) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	d := testDispatcher(nil)
	d.name, d.metrics = plugin, admission.NewMetrics(reg)
	a := createAttrs(cmGVR, cmGVK, "cm1")
	ctx := context.Background()
	mr := match.NewRequest(ctx, d.matchEnv(), a)
	_, _ = d.shouldCall(ctx, &mr, h, a)
	return reg
}

func TestMatchConditionMetrics(t *testing.T) {
	cases := []struct {
		name, plugin string
		hook         *hook
		errors       string
		exclusions   string
		observations int
	}{
		{name: "error under Fail", plugin: ValidatingName, hook: hookWith(&fail, missing, "true"),
			errors:       `apiserver_admission_match_condition_evaluation_errors_total{kind="webhook",name="v.example.com",operation="CREATE",type="validating"} 1`,
			observations: 1},
		{name: "two errors, mutating", plugin: MutatingName, hook: hookWith(&fail, missing, "object.nosuch == 1"),
			errors:       `apiserver_admission_match_condition_evaluation_errors_total{kind="webhook",name="v.example.com",operation="CREATE",type="admit"} 2`,
			observations: 1},
		{name: "false, validating", plugin: ValidatingName, hook: hookWith(&fail, "true", "false"),
			exclusions:   `apiserver_admission_match_condition_exclusions_total{kind="webhook",name="v.example.com",operation="CREATE",type="validate"} 1`,
			observations: 1},
		{name: "false, mutating", plugin: MutatingName, hook: hookWith(&fail, "false"),
			exclusions:   `apiserver_admission_match_condition_exclusions_total{kind="webhook",name="v.example.com",operation="CREATE",type="admit"} 1`,
			observations: 1},
		{name: "error under Ignore", plugin: ValidatingName, hook: hookWith(&ignore, missing),
			errors:       `apiserver_admission_match_condition_evaluation_errors_total{kind="webhook",name="v.example.com",operation="CREATE",type="validating"} 1`,
			exclusions:   `apiserver_admission_match_condition_exclusions_total{kind="webhook",name="v.example.com",operation="CREATE",type="validate"} 1`,
			observations: 1},
		{name: "all true is not timed", plugin: ValidatingName, hook: hookWith(&fail, "true")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := runConditions(t, tc.plugin, tc.hook)
			expectLines(t, reg, "apiserver_admission_match_condition_evaluation_errors_total", errorsHelp, tc.errors)
			expectLines(t, reg, "apiserver_admission_match_condition_exclusions_total", exclusionsHelp, tc.exclusions)
			if n := testutil.CollectAndCount(reg, "apiserver_admission_match_condition_evaluation_seconds"); n != tc.observations {
				t.Errorf("evaluation_seconds series = %d, want %d", n, tc.observations)
			}
		})
	}
}

func TestMatchConditionSecondsLabelsAndBuckets(t *testing.T) {
	reg := runConditions(t, ValidatingName, hookWith(&fail, "false"))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "apiserver_admission_match_condition_evaluation_seconds" {
			continue
		}
		m := mf.GetMetric()[0]
		var labels, bounds []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		for _, b := range m.GetHistogram().GetBucket() {
			bounds = append(bounds, fmt.Sprint(b.GetUpperBound()))
		}
		if got, want := strings.Join(labels, ","), "kind=webhook,name=v.example.com,operation=CREATE,type=validating"; got != want {
			t.Errorf("labels = %s, want %s", got, want)
		}
		if got, want := strings.Join(bounds, ","), "0.001,0.005,0.01,0.025,0.1,0.2,0.25"; got != want {
			t.Errorf("buckets = %s, want %s", got, want)
		}
		if c := m.GetHistogram().GetSampleCount(); c != 1 {
			t.Errorf("observations = %d, want 1", c)
		}
		return
	}
	t.Fatal("no apiserver_admission_match_condition_evaluation_seconds")
}

// expectLines compares metric in reg with the exposition help+line; an
// empty line means no series.
func expectLines(t *testing.T, reg *prometheus.Registry, metric, help, line string) {
	t.Helper()
	want := ""
	if line != "" {
		want = help + line + "\n"
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), metric); err != nil {
		t.Error(err)
	}
}
