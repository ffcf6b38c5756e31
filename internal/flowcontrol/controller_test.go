package flowcontrol

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
)

// bootstrapController is a controller configured with upstream's mandatory
// and suggested objects and kube-apiserver's default 600 seats.
func bootstrapController(t *testing.T, now func() time.Time) *Controller {
	t.Helper()
	c := New(Options{ServerConcurrencyLimit: 600, Now: now})
	var pls []*flowcontrolv1.PriorityLevelConfiguration
	pls = append(pls, bootstrap.MandatoryPriorityLevelConfigurations...)
	pls = append(pls, bootstrap.SuggestedPriorityLevelConfigurations...)
	var fss []*flowcontrolv1.FlowSchema
	fss = append(fss, bootstrap.MandatoryFlowSchemas...)
	fss = append(fss, bootstrap.SuggestedFlowSchemas...)
	c.Configure(pls, fss)
	return c
}

// TestLimitsAsUpstream: nominal, lower and upper limits of the bootstrap
// levels, and the current limits of an idle server, as kube-apiserver
// 1.37.2's apiserver_flowcontrol_*_limit_seats reported them (its system
// level had had some demand, so its current limit is not compared).
func TestLimitsAsUpstream(t *testing.T) {
	c := bootstrapController(t, time.Now)
	c.mu.Lock()
	c.levels["exempt"].peak = 2 // the exempt level's demand when recorded
	c.adjustBorrowing(false)
	c.mu.Unlock()
	want := map[string][4]int{ // nominal, lower, upper, current
		"catch-all":       {13, 13, 613, 30},
		"exempt":          {0, 0, 600, 2},
		"global-default":  {49, 24, 649, 56},
		"leader-election": {25, 25, 625, 58},
		"node-high":       {98, 73, 698, 170},
		"system":          {74, 50, 674, -1},
		"workload-high":   {98, 49, 698, 114},
		"workload-low":    {245, 24, 845, 56},
	}
	if len(c.levels) != len(want) {
		t.Errorf("%d levels, want %d", len(c.levels), len(want))
	}
	for name, w := range want {
		l := c.levels[name]
		if l == nil {
			t.Errorf("no level %s", name)
			continue
		}
		got := [4]int{l.nominal, l.minimum, l.maximum, l.current}
		if w[3] < 0 {
			got[3] = -1
		}
		if got != w {
			t.Errorf("%s: nominal/lower/upper/current %v, want %v", name, got, w)
		}
	}
}

func TestClassifyBootstrap(t *testing.T) {
	c := bootstrapController(t, time.Now)
	cases := []struct {
		name string
		d    Digest
		fs   string
		pl   string
	}{
		{"admin", Digest{User: "admin", Groups: []string{"system:masters", "system:authenticated"}, IsResource: true, Verb: "list", Resource: "pods", Namespace: "a"}, "exempt", "exempt"},
		{"anonymous probe", Digest{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, Verb: "get", Path: "/readyz"}, "probes", "exempt"},
		{"anonymous other", Digest{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, Verb: "get", Path: "/version"}, "global-default", "global-default"},
		{"node", Digest{User: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}, IsResource: true, Verb: "get", Resource: "pods", Namespace: "a"}, "system-nodes", "system"},
		{"node lease", Digest{User: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}, IsResource: true, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-node-lease"}, "system-node-high", "node-high"},
		{"controller manager", Digest{User: "system:kube-controller-manager", Groups: []string{"system:authenticated"}, IsResource: true, Verb: "list", Resource: "pods"}, "kube-controller-manager", "workload-high"},
		{"kube-system sa", Digest{User: "system:serviceaccount:kube-system:job-controller", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}, IsResource: true, Verb: "list", Resource: "pods"}, "kube-system-service-accounts", "workload-high"},
		{"service account", Digest{User: "system:serviceaccount:a:b", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:a", "system:authenticated"}, IsResource: true, Verb: "list", Resource: "pods", Namespace: "a"}, "service-accounts", "workload-low"},
		{"user", Digest{User: "alice", Groups: []string{"system:authenticated"}, IsResource: true, Verb: "list", Resource: "configmaps", Namespace: "a"}, "global-default", "global-default"},
	}
	for _, tc := range cases {
		cl := c.Classify(&tc.d)
		if cl.FlowSchema != tc.fs || cl.PriorityLevel != tc.pl {
			t.Errorf("%s: classified %s/%s, want %s/%s", tc.name, cl.FlowSchema, cl.PriorityLevel, tc.fs, tc.pl)
		}
	}
}

// TestMandatoryImagined: with no configuration at all, the mandatory
// schemas and levels are imagined, as upstream.
func TestMandatoryImagined(t *testing.T) {
	c := New(Options{ServerConcurrencyLimit: 600})
	cl := c.Classify(&Digest{User: "alice", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/version"})
	if cl.FlowSchema != "catch-all" || cl.PriorityLevel != "catch-all" {
		t.Errorf("unconfigured: %s/%s", cl.FlowSchema, cl.PriorityLevel)
	}
	if got := c.levels["catch-all"].nominal; got != 600 {
		t.Errorf("catch-all alone has %d seats, want all 600", got)
	}
}

// TestDanglingSchemaIgnored: a schema naming a missing level matches
// nothing.
func TestDanglingSchemaIgnored(t *testing.T) {
	c := New(Options{ServerConcurrencyLimit: 600})
	fs := bootstrap.SuggestedFlowSchemaGlobalDefault.DeepCopy()
	fs.Spec.MatchingPrecedence = 5
	fs.Spec.PriorityLevelConfiguration.Name = "missing"
	c.Configure(nil, []*flowcontrolv1.FlowSchema{fs})
	if !c.Dangling(fs) {
		t.Error("not reported dangling")
	}
	if cl := c.Classify(&Digest{User: "alice", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/x"}); cl.FlowSchema != "catch-all" {
		t.Errorf("classified under %s", cl.FlowSchema)
	}
}

// TestAdmitRefusesPastTheLimit: a level of one seat and no queues refuses
// a second request with concurrency-limit until the first is released.
func TestAdmitRefusesPastTheLimit(t *testing.T) {
	c := New(Options{ServerConcurrencyLimit: 1})
	d := &Digest{User: "alice", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/x"}
	one := func(Classification, int) Estimate { return Estimate{Seats: 1} }
	a, r := c.Admit(context.Background(), d, time.Minute, one)
	if r != nil {
		t.Fatalf("first refused: %+v", r)
	}
	_, r = c.Admit(context.Background(), d, time.Minute, one)
	if r == nil || r.Reason != rejectConcurrencyLimit || r.RetryAfter != 1 {
		t.Fatalf("second: %+v", r)
	}
	a.Release()
	a.Release() // twice does nothing
	b, r := c.Admit(context.Background(), d, time.Minute, one)
	if r != nil {
		t.Fatalf("after release refused: %+v", r)
	}
	b.Release()
}

// TestAdmitMetrics: a write's estimate is reported as upstream's series
// (watch count sampled, estimated seats the larger of initial and final,
// execution time by type), and its seats stay counted as executing until
// its linger ends.
func TestAdmitMetrics(t *testing.T) {
	c := bootstrapController(t, time.Now)
	reg := prometheus.NewPedanticRegistry()
	c.Register(reg)
	d := &Digest{User: "alice", Groups: []string{"system:authenticated"}, IsResource: true, Verb: "create", Resource: "configmaps", Namespace: "a"}
	write := func(Classification, int) Estimate {
		return Estimate{Seats: 1, FinalSeats: 3, AdditionalLatency: 100 * time.Millisecond, Watchers: 25, WatchersCounted: true}
	}
	a, r := c.Admit(context.Background(), d, time.Minute, write)
	if r != nil {
		t.Fatalf("refused: %+v", r)
	}
	if a.Seats != 3 {
		t.Errorf("seats %d, want the final 3", a.Seats)
	}
	a.Release()
	labels := []string{"global-default", "global-default"}
	seatsNow := func() float64 {
		return testutil.ToFloat64(c.metrics.executingSeats.WithLabelValues(labels...))
	}
	if got := seatsNow(); got != 3 {
		t.Errorf("executing seats right after release: %v, want 3 (lingering)", got)
	}
	for i := 0; seatsNow() != 0; i++ {
		if i > 100 {
			t.Fatalf("executing seats %v after the linger", seatsNow())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for name, want := range map[string]int{
		"apiserver_flowcontrol_watch_count_samples":                1,
		"apiserver_flowcontrol_work_estimated_seats":               1,
		"apiserver_flowcontrol_request_execution_seconds":          1,
		"apiserver_flowcontrol_request_queue_length_after_enqueue": 1,
		"apiserver_flowcontrol_current_inqueue_seats":              1,
		// a series (a pair for bounds, one per phase) per level
		"apiserver_flowcontrol_priority_level_seat_utilization":    8,
		"apiserver_flowcontrol_priority_level_request_utilization": 16,
		"apiserver_flowcontrol_demand_seats":                       8,
		"apiserver_flowcontrol_read_vs_write_current_requests":     4,
		"apiserver_flowcontrol_current_r":                          8,
		"apiserver_flowcontrol_dispatch_r":                         8,
		"apiserver_flowcontrol_latest_s":                           8,
		"apiserver_flowcontrol_next_s_bounds":                      16,
		"apiserver_flowcontrol_next_discounted_s_bounds":           16,
		"apiserver_flowcontrol_demand_seats_smoothed":              8,
		"apiserver_flowcontrol_target_seats":                       8,
		"apiserver_flowcontrol_seat_fair_frac":                     1,
	} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != want {
			t.Errorf("%s: %d series (%v), want %d", name, n, err, want)
		}
	}
	if m, r := histogramSum(t, reg, "apiserver_flowcontrol_read_vs_write_current_requests", "executing", "mutating"),
		histogramSum(t, reg, "apiserver_flowcontrol_read_vs_write_current_requests", "executing", "readOnly"); m <= 0 || r != 0 {
		t.Errorf("time-weighted executing requests: mutating %v, read-only %v; want some, none", m, r)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP apiserver_flowcontrol_watch_count_samples [ALPHA] count of watchers for mutating requests in API Priority and Fairness
# TYPE apiserver_flowcontrol_watch_count_samples histogram
apiserver_flowcontrol_watch_count_samples_bucket{flow_schema="global-default",priority_level="global-default",le="0"} 0
apiserver_flowcontrol_watch_count_samples_bucket{flow_schema="global-default",priority_level="global-default",le="1"} 0
apiserver_flowcontrol_watch_count_samples_bucket{flow_schema="global-default",priority_level="global-default",le="10"} 0
apiserver_flowcontrol_watch_count_samples_bucket{flow_schema="global-default",priority_level="global-default",le="100"} 1
apiserver_flowcontrol_watch_count_samples_bucket{flow_schema="global-default",priority_level="global-default",le="1000"} 1
apiserver_flowcontrol_watch_count_samples_bucket{flow_schema="global-default",priority_level="global-default",le="10000"} 1
apiserver_flowcontrol_watch_count_samples_bucket{flow_schema="global-default",priority_level="global-default",le="+Inf"} 1
apiserver_flowcontrol_watch_count_samples_sum{flow_schema="global-default",priority_level="global-default"} 25
apiserver_flowcontrol_watch_count_samples_count{flow_schema="global-default",priority_level="global-default"} 1
`), "apiserver_flowcontrol_watch_count_samples"); err != nil {
		t.Error(err)
	}
}

// histogramSum is the sum of the histogram name whose label values are
// all of values.
func histogramSum(t *testing.T, reg prometheus.Gatherer, name string, values ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			have := map[string]bool{}
			for _, l := range m.GetLabel() {
				have[l.GetValue()] = true
			}
			for _, v := range values {
				if !have[v] {
					continue metric
				}
			}
			return m.GetHistogram().GetSampleSum()
		}
	}
	t.Fatalf("no %s%v", name, values)
	return 0
}

// TestQueueNote: every request of a level with queues is noted into its
// queue (1) and out of it (-1) as upstream's queue set notes it, by kind: a
// write seated at once, a read that waits until the write is released.
func TestQueueNote(t *testing.T) {
	var mu sync.Mutex
	var notes []string
	note := func(readOnly bool, delta int) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, fmt.Sprintf("readOnly=%v %+d", readOnly, delta))
	}
	noted := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(notes)
	}
	c := New(Options{ServerConcurrencyLimit: 600, QueueNote: note})
	c.Configure(slices.Concat(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations),
		slices.Concat(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas))
	digest := func(verb string) *Digest {
		return &Digest{User: "alice", Groups: []string{"system:authenticated"}, IsResource: true, Verb: verb, Resource: "configmaps", Namespace: "a"}
	}
	wide := func(Classification, int) Estimate { return Estimate{Seats: 100_000} }
	one := func(Classification, int) Estimate { return Estimate{Seats: 1} }
	write, r := c.Admit(context.Background(), digest("create"), time.Minute, wide)
	if r != nil {
		t.Fatalf("write refused: %+v", r)
	}
	read := make(chan Admission)
	go func() {
		a, _ := c.Admit(context.Background(), digest("list"), time.Minute, one)
		read <- a
	}()
	for deadline := time.Now().Add(10 * time.Second); len(noted()) < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the read was not queued behind the write: %v", noted())
		}
	}
	write.Release()
	a := <-read
	a.Release()
	want := []string{"readOnly=false +1", "readOnly=false -1", "readOnly=true +1", "readOnly=true -1"}
	if got := noted(); !slices.Equal(got, want) {
		t.Errorf("notes %v, want %v", got, want)
	}
}
