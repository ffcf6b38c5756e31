package admission

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// recorder is a plugin that logs its calls and can mutate, request
// reinvocation or fail.
type recorder struct {
	name     string
	log      *[]string
	ops      []Operation
	reinvoke bool
	fail     error
}

func (r *recorder) Handles(op Operation) bool {
	for _, o := range r.ops {
		if o == op {
			return true
		}
	}
	return len(r.ops) == 0
}

func (r *recorder) Admit(_ context.Context, a *Attributes) error {
	pass := "1"
	if a.Record.IsReinvoke() {
		pass = "2"
	}
	*r.log = append(*r.log, "admit:"+r.name+":"+pass)
	if r.reinvoke && !a.Record.IsReinvoke() {
		a.Record.RequestReinvocation()
	}
	return r.fail
}

func (r *recorder) Validate(_ context.Context, a *Attributes) error {
	*r.log = append(*r.log, "validate:"+r.name)
	return r.fail
}

func TestChainOrderAndReinvocation(t *testing.T) {
	var log []string
	a := &recorder{name: "a", log: &log}
	b := &recorder{name: "b", log: &log, reinvoke: true}
	c := &recorder{name: "c", log: &log, ops: []Operation{Delete}}
	chain := NewChain(NamedPlugin{"a", a}, NamedPlugin{"b", b}, NamedPlugin{"c", c})
	attrs := &Attributes{Operation: Create, Record: NewRecord()}
	if err := chain.Admit(context.Background(), attrs); err != nil {
		t.Fatal(err)
	}
	if err := chain.Validate(context.Background(), attrs); err != nil {
		t.Fatal(err)
	}
	want := []string{"admit:a:1", "admit:b:1", "admit:a:2", "admit:b:2", "validate:a", "validate:b"}
	if !reflect.DeepEqual(log, want) {
		t.Fatalf("calls = %v, want %v (one reinvocation pass, c skipped: it does not handle CREATE)", log, want)
	}
}

// TestChainHandles: a chain handles the operations some plugin of it
// handles, and no other.
func TestChainHandles(t *testing.T) {
	var log []string
	chain := NewChain(NamedPlugin{"d", &recorder{name: "d", log: &log, ops: []Operation{Delete}}})
	for op, want := range map[Operation]bool{Create: false, Update: false, Delete: true, Connect: false} {
		if got := chain.Handles(op); got != want {
			t.Errorf("Handles(%s) = %v, want %v", op, got, want)
		}
	}
	if NewChain().Handles(Create) {
		t.Error("an empty chain handles CREATE")
	}
}

// TestChainWithoutMetrics: a chain given no metrics (nil) runs its plugins
// and observes nothing.
func TestChainWithoutMetrics(t *testing.T) {
	var log []string
	chain := NewChain(NamedPlugin{"a", &recorder{name: "a", log: &log}}).WithMetrics(nil)
	attrs := &Attributes{Operation: Create, Record: NewRecord()}
	if err := chain.Admit(context.Background(), attrs); err != nil {
		t.Fatal(err)
	}
	if err := chain.Validate(context.Background(), attrs); err != nil {
		t.Fatal(err)
	}
	if want := []string{"admit:a:1", "validate:a"}; !reflect.DeepEqual(log, want) {
		t.Errorf("calls = %v, want %v", log, want)
	}
}

func TestChainStopsAtFirstError(t *testing.T) {
	var log []string
	boom := errors.New("boom")
	chain := NewChain(NamedPlugin{"a", &recorder{name: "a", log: &log, fail: boom}}, NamedPlugin{"b", &recorder{name: "b", log: &log}})
	attrs := &Attributes{Operation: Update, Record: NewRecord()}
	if err := chain.Admit(context.Background(), attrs); !errors.Is(err, boom) {
		t.Fatalf("Admit = %v, want boom", err)
	}
	if err := chain.Validate(context.Background(), attrs); !errors.Is(err, boom) {
		t.Fatalf("Validate = %v, want boom", err)
	}
	if want := []string{"admit:a:1", "validate:a"}; !reflect.DeepEqual(log, want) {
		t.Fatalf("calls = %v, want %v", log, want)
	}
}

func TestRecordAnnotations(t *testing.T) {
	r := NewRecord()
	cases := []struct {
		key, value string
		level      AuditLevel
		err        string
	}{
		{"a.example.com/k", "v", LevelMetadata, ""},
		{"a.example.com/k", "v", LevelMetadata, ""},
		{"a.example.com/k", "other", LevelMetadata, "not allowd to be overwritten"},
		{"nokey", "v", LevelMetadata, "annotation key has invalid format, the right format is a DNS subdomain prefix and '/' and key name."},
		{"a.example.com/Bad Key", "v", LevelMetadata, "annotation key has invalid format"},
		{"a.example.com/low", "v", LevelNone, "lower than Metadata"},
		{"a.example.com/req", "v", LevelRequest, ""},
	}
	for _, tc := range cases {
		err := r.AddAnnotationWithLevel(tc.key, tc.value, tc.level)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("AddAnnotationWithLevel(%q, %q, %v) = %v, want %q", tc.key, tc.value, tc.level, err, tc.err)
		}
	}
	if got := len(r.Annotations(LevelMetadata)); got != 1 {
		t.Errorf("annotations at Metadata = %d, want 1 (the Request-level one is hidden)", got)
	}
	if got := len(r.Annotations(LevelRequestResponse)); got != 2 {
		t.Errorf("annotations at RequestResponse = %d, want 2", got)
	}
}

// ownSteps is a plugin that records its own steps: the chain adds none.
type ownSteps struct{ recorder }

func (*ownSteps) RecordsOwnSteps() {}

func TestChainTraceStepsOfCompiledInPlugins(t *testing.T) {
	var log []string
	a := &recorder{name: "a", log: &log}
	b := &recorder{name: "b", log: &log, reinvoke: true}
	w := &ownSteps{recorder{name: "w", log: &log}}
	bad := &recorder{name: "bad", log: &log, ops: []Operation{Update}, fail: errors.New("no")}
	chain := NewChain(NamedPlugin{"A", a}, NamedPlugin{"B", b}, NamedPlugin{"W", w}, NamedPlugin{"Bad", bad})
	attrs := &Attributes{Operation: Create, Record: NewRecord()}
	if err := chain.Admit(context.Background(), attrs); err != nil {
		t.Fatal(err)
	}
	if err := chain.Validate(context.Background(), attrs); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range attrs.Record.Steps() {
		got = append(got, s.Plugin+":"+s.Reason+":"+string(rune('0'+s.Round)))
		if !s.Matched || s.Name != "" {
			t.Errorf("step %+v: want Matched and no Name", s)
		}
	}
	want := []string{"A:admit:0", "B:admit:0", "A:admit:1", "B:admit:1", "A:validate:0", "B:validate:0"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("steps = %v, want %v", got, want)
	}
	upd := &Attributes{Operation: Update, Record: NewRecord()}
	if err := chain.Admit(context.Background(), upd); err == nil {
		t.Fatal("Admit: want the error of Bad")
	}
	steps := upd.Record.Steps()
	if last := steps[len(steps)-1]; last.Plugin != "Bad" || last.Err != "no" {
		t.Fatalf("last step = %+v, want Bad's error", last)
	}
}

// stepWriter records its own step when it runs.
type stepWriter struct{ ownSteps }

func (s *stepWriter) Admit(_ context.Context, a *Attributes) error {
	a.Record.AddStep(Step{Plugin: "W", Name: "hook", Matched: true, Reason: "patched"})
	return nil
}

// TestChainTraceKeepsOrderAcrossHeldSteps: the chain holds compiled-in
// plugins' steps and writes them to the record in runs; steps a plugin
// records itself, steps kept whole (errors) and runs longer than what it
// holds at once still come out in the order the plugins ran.
func TestChainTraceKeepsOrderAcrossHeldSteps(t *testing.T) {
	var log []string
	var plugins []NamedPlugin
	var want []string
	for i := range 20 {
		name := "P" + string(rune('a'+i))
		plugins = append(plugins, NamedPlugin{name, &recorder{name: name, log: &log}})
		want = append(want, name+":")
	}
	plugins = append(plugins, NamedPlugin{"W", &stepWriter{}})
	want = append(want, "W:hook")
	for i := range 18 {
		name := "Q" + string(rune('a'+i))
		plugins = append(plugins, NamedPlugin{name, &recorder{name: name, log: &log}})
		want = append(want, name+":")
	}
	plugins = append(plugins, NamedPlugin{"Bad", &recorder{name: "bad", log: &log, fail: errors.New("no")}})
	want = append(want, "Bad:")
	attrs := &Attributes{Operation: Create, Record: NewRecord()}
	if err := NewChain(plugins...).Admit(context.Background(), attrs); err == nil {
		t.Fatal("Admit: want the error of Bad")
	}
	var got []string
	for _, s := range attrs.Record.Steps() {
		got = append(got, s.Plugin+":"+s.Name)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("steps =\n%v\nwant\n%v", got, want)
	}
}

// nodesOnly is a Scoped recorder that looks at nodes only.
type nodesOnly struct{ recorder }

func (*nodesOnly) Concerns(a *Attributes) bool { return a.Resource.Resource == "nodes" }

// TestChainSkipsScopedPlugins: a Scoped plugin is not called on a request it
// does not look at; it is counted in its metric and its trace step says it
// was skipped (SkipResource); on a request it looks at it runs as any.
func TestChainSkipsScopedPlugins(t *testing.T) {
	var log []string
	reg := prometheus.NewPedanticRegistry()
	chain := NewChain(NamedPlugin{"A", &recorder{name: "a", log: &log}}, NamedPlugin{"N", &nodesOnly{recorder{name: "n", log: &log}}}).
		WithMetrics(NewMetrics(reg))
	pods := &Attributes{Operation: Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Record: NewRecord()}
	if err := chain.Admit(context.Background(), pods); err != nil {
		t.Fatal(err)
	}
	if err := chain.Validate(context.Background(), pods); err != nil {
		t.Fatal(err)
	}
	if want := []string{"admit:a:1", "validate:a"}; !reflect.DeepEqual(log, want) {
		t.Fatalf("calls = %v, want %v", log, want)
	}
	var got []string
	for _, s := range pods.Record.Steps() {
		got = append(got, fmt.Sprintf("%s:%s:%v:%s", s.Plugin, s.Reason, s.Matched, s.Skip))
		if s.Skip != "" && s.Duration != 0 {
			t.Errorf("skipped step %+v has a duration", s)
		}
	}
	want := []string{"A:admit:true:", "N:admit:false:Resource", "A:validate:true:", "N:validate:false:Resource"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("steps = %v, want %v", got, want)
	}
	if n := testutil.CollectAndCount(reg, "apiserver_admission_controller_admission_duration_seconds"); n != 4 {
		t.Fatalf("controller series = %d, want 4 (A and N, admit and validate)", n)
	}
	log = nil
	nodes := &Attributes{Operation: Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Record: NewRecord()}
	if err := chain.Admit(context.Background(), nodes); err != nil {
		t.Fatal(err)
	}
	if want := []string{"admit:a:1", "admit:n:1"}; !reflect.DeepEqual(log, want) {
		t.Fatalf("calls on nodes = %v, want %v", log, want)
	}
}

// labeler is a compiled-in mutating plugin that labels a ConfigMap.
type labeler struct{}

func (labeler) Handles(Operation) bool { return true }
func (labeler) Admit(_ context.Context, a *Attributes) error {
	cm := a.Object.(*corev1.ConfigMap)
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["set-by"] = "labeler"
	return nil
}

// TestVerboseTraceShowsWhatPluginsChanged: on a verbose trace (a dry run
// that asked for it) a compiled-in plugin that changed the object has its
// step marked Mutated with the object before and after; one that changed
// nothing, and every plugin on an ordinary trace, has a plain step.
func TestVerboseTraceShowsWhatPluginsChanged(t *testing.T) {
	var log []string
	chain := NewChain(NamedPlugin{"A", &recorder{name: "a", log: &log}}, NamedPlugin{"L", labeler{}})
	run := func(verbose bool) []Step {
		a := &Attributes{Operation: Create, DryRun: true, Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, Record: NewRecord()}
		a.Record.SetVerbose(verbose)
		if err := chain.Admit(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		return a.Record.Steps()
	}
	steps := run(true)
	if len(steps) != 2 || steps[0].Mutated || steps[0].Detail != nil {
		t.Fatalf("verbose: steps %+v, want A plain", steps)
	}
	l := steps[1]
	if l.Plugin != "L" || !l.Mutated || l.Detail == nil || !strings.Contains(string(l.Detail.After), `"set-by":"labeler"`) ||
		strings.Contains(string(l.Detail.Base), "set-by") {
		t.Fatalf("verbose: L's step %+v, want Mutated with the object before and after", l)
	}
	for _, s := range run(false) {
		if s.Mutated || s.Detail != nil {
			t.Fatalf("ordinary trace: step %+v, want plain", s)
		}
	}
}
