package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// requestSeriesLine is the exposition line of apiserver_request_total for
// the labels (in the registry's order: sorted by name) and value.
func requestSeriesLine(verb, dryRun, resource, subresource, scope, component, code string, n int) string {
	return fmt.Sprintf(`apiserver_request_total{code=%q,component=%q,dry_run=%q,group="",resource=%q,scope=%q,subresource=%q,verb=%q,version=%q} %d`,
		code, component, dryRun, resource, scope, subresource, verb, map[bool]string{true: "v1", false: ""}[resource != ""], n)
}

// Real requests through ServeHTTP are counted on /metrics once each, with
// upstream's verb, scope, dry run and code labels; requests upstream has
// no route for (an unknown resource) are not counted.
func TestRequestMetricsServedOnMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.RequestMetrics = NewRequestMetrics(reg)
	cfg.Extra = map[string]http.Handler{"/metrics": promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	s := New(cfg)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	ts := &testServer{t: t, s: s}
	const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`
	ts.must(201, "POST", "/api/v1/namespaces/default/configmaps", "application/json", cm)
	ts.must(201, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All", "application/json", strings.Replace(cm, `"a"`, `"b"`, 1))
	ts.must(200, "GET", "/api/v1/namespaces/default/configmaps/a", "", "")
	ts.must(200, "GET", "/api/v1/namespaces/default/configmaps/a", "", "")
	ts.must(200, "GET", "/api/v1/namespaces/default/configmaps", "", "")
	ts.must(200, "GET", "/api/v1/configmaps", "", "")
	ts.must(200, "PATCH", "/api/v1/namespaces/default/configmaps/a?fieldManager=m", "application/apply-patch+yaml", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`)
	for _, req := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/api/v1/namespaces/default/configmaps/missing", 404},
		{"GET", "/api/v1/namespaces/default/nosuchresources", 404},
		{"GET", "/healthz", 200},
		{"DELETE", "/api/v1/namespaces/default/configmaps", 200},
	} {
		if w := ts.do(req.method, req.path, "", ""); w.Code != req.code {
			t.Fatalf("%s %s = %d %s, want %d", req.method, req.path, w.Code, w.Body.String(), req.code)
		}
	}
	w := ts.do("GET", "/metrics", "", "")
	body := w.Body.String()
	for _, want := range []string{
		requestSeriesLine("POST", "", "configmaps", "", "resource", "apiserver", "201", 1),
		requestSeriesLine("POST", "All", "configmaps", "", "resource", "apiserver", "201", 1),
		requestSeriesLine("GET", "", "configmaps", "", "resource", "apiserver", "200", 2),
		requestSeriesLine("GET", "", "configmaps", "", "resource", "apiserver", "404", 1),
		requestSeriesLine("LIST", "", "configmaps", "", "namespace", "apiserver", "200", 1),
		requestSeriesLine("LIST", "", "configmaps", "", "cluster", "apiserver", "200", 1),
		requestSeriesLine("APPLY", "", "configmaps", "", "resource", "apiserver", "200", 1),
		requestSeriesLine("DELETE", "", "configmaps", "", "namespace", "apiserver", "200", 1),
		requestSeriesLine("GET", "", "", "/healthz", "", "", "200", 1),
		// Two GETs and the 404 (the duration has no code label).
		`apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 3`,
		`apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1",le="60"} 3`,
		"# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb",
		"# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in seconds",
	} {
		if !strings.HasPrefix(want, "#") {
			want += "\n" // the whole value
		}
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, `resource="nosuchresources"`) {
		t.Errorf("/metrics counts a request for an unknown resource, which upstream has no route for")
	}
}

// A watch is in apiserver_longrunning_requests while it lasts and counted
// as WATCH when it ends.
func TestRequestMetricsWatch(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.RequestMetrics = NewRequestMetrics(reg)
	s := New(cfg)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps?watch=1", nil).WithContext(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.ServeHTTP(httptest.NewRecorder(), r) }()
	const gauge = `apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",scope="namespace",subresource="",verb="WATCH",version="v1"} 1`
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(gather(t, reg), gauge) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s while the watch lasts:\n%s", gauge, gather(t, reg))
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	got := gather(t, reg)
	if !strings.Contains(got, strings.TrimSuffix(gauge, "1")+"0") {
		t.Errorf("the gauge is not back to 0 when the watch ends:\n%s", got)
	}
	if want := requestSeriesLine("WATCH", "", "configmaps", "", "namespace", "apiserver", "200", 1); !strings.Contains(got, want) {
		t.Errorf("/metrics lacks %s:\n%s", want, got)
	}
}

func gather(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	w := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	return w.Body.String()
}

// Recording a request of a label set seen before allocates nothing.
func TestRequestMetricsObserveAllocatesNothing(t *testing.T) {
	m := NewRequestMetrics(prometheus.NewRegistry())
	r := httptest.NewRequest("POST", "/api/v1/namespaces/default/configmaps", nil)
	info := parseRequestInfo(r)
	record := func() {
		m.observe(seriesKey{codedLabels{requestMetricLabels(r, info), 201}, finishedKind(r, info, SelfRequestUser)},
			FinishedRequest{Code: 201, Took: time.Millisecond, Excluded: time.Microsecond})
	}
	record()
	if n := testing.AllocsPerRun(100, record); n != 0 {
		t.Errorf("observe allocates %v times per request, want 0", n)
	}
}

// apiserver_current_inflight_requests is, at each sample, the most
// requests of each kind that executed at once under the in-flight limit
// since the previous sample.
func TestRequestMetricsInflightSample(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.RequestMetrics = NewRequestMetrics(reg)
	cfg.MaxRequestsInflight, cfg.MaxMutatingRequestsInflight = 4, 4
	s := New(cfg)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	ts := &testServer{t: t, s: s}
	sample := func(readOnly, mutating int) {
		t.Helper()
		cfg.RequestMetrics.publishInflight()
		got := gather(t, reg)
		for _, want := range []string{
			fmt.Sprintf("apiserver_current_inflight_requests{request_kind=\"readOnly\"} %d\n", readOnly),
			fmt.Sprintf("apiserver_current_inflight_requests{request_kind=\"mutating\"} %d\n", mutating),
		} {
			if !strings.Contains(got, want) {
				t.Errorf("/metrics lacks %s:\n%s", want, got)
			}
		}
	}
	sample(0, 0)
	ts.must(200, "GET", "/api/v1/namespaces/default/configmaps", "", "")
	ts.must(201, "POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)
	sample(1, 1)
	sample(0, 0)
}

// BenchmarkRequestMetricsRecord is the per-request cost of the series: the
// labels of a create and its recording, from parallel goroutines.
func BenchmarkRequestMetricsRecord(b *testing.B) {
	m := NewRequestMetrics(prometheus.NewRegistry())
	r := httptest.NewRequest("POST", "/api/v1/namespaces/default/configmaps", nil)
	info := parseRequestInfo(r)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.observe(seriesKey{codedLabels{requestMetricLabels(r, info), 201}, finishedKind(r, info, "alice")},
				FinishedRequest{Code: 201, Took: time.Millisecond})
			m.marks.add(false, 1)
			m.marks.add(false, -1)
		}
	})
}
