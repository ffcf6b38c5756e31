package requestmetrics

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/admitd/admitd/internal/apiserver"
)

// testRequest is one request of the table: method, URL and content type.
type testRequest struct{ method, url, contentType string }

func (tr testRequest) new() *http.Request {
	r := httptest.NewRequest(tr.method, tr.url, nil)
	if tr.contentType != "" {
		r.Header.Set("Content-Type", tr.contentType)
	}
	return r
}

var resourceRequests = []testRequest{
	{"GET", "/api/v1/namespaces/default/pods/p", ""},
	{"HEAD", "/api/v1/namespaces/default/pods/p", ""},
	{"GET", "/api/v1/namespaces/default/pods", ""},
	{"HEAD", "/api/v1/namespaces/default/pods", ""},
	{"GET", "/api/v1/pods", ""},
	{"GET", "/api/v1/nodes", ""},
	{"GET", "/api/v1/nodes/n1", ""},
	{"GET", "/api/v1/namespaces", ""},
	{"GET", "/api/v1/namespaces/default", ""},
	{"PUT", "/api/v1/namespaces/default/finalize", ""},
	{"PUT", "/api/v1/namespaces/default/status", ""},
	{"GET", "/api/v1/namespaces/default/pods?watch=true", ""},
	{"GET", "/api/v1/namespaces/default/pods?watch=1&resourceVersion=5", ""},
	{"GET", "/api/v1/namespaces/default/pods?watch=false", ""},
	{"GET", "/api/v1/namespaces/default/pods?watch=0", ""},
	{"GET", "/api/v1/namespaces/default/pods?watch=FALSE", ""},
	{"GET", "/api/v1/namespaces/default/pods?watch=", ""},
	{"GET", "/api/v1/namespaces/default/pods?watch=yes", ""},
	{"GET", "/api/v1/namespaces/default/pods/p?watch=true", ""},
	{"GET", "/api/v1/pods?watch=true", ""},
	{"GET", "/api/v1/watch/namespaces/default/pods", ""},
	{"GET", "/api/v1/watch/namespaces/default/pods/p", ""},
	{"GET", "/api/v1/watch/pods", ""},
	{"GET", "/apis/apps/v1/watch/deployments", ""},
	{"GET", "/api/v1/namespaces/default/pods?allowWatchBookmarks=true&sendInitialEvents=true&watch=true", ""},
	{"POST", "/api/v1/namespaces/default/pods", "application/json"},
	{"POST", "/api/v1/namespaces", "application/json"},
	{"POST", "/api/v1/namespaces/default/pods?dryRun=All", "application/json"},
	{"POST", "/api/v1/namespaces/default/pods?dryRun=All&dryRun=All", "application/json"},
	{"POST", "/api/v1/namespaces/default/pods?dryRun=Some", "application/json"},
	{"POST", "/api/v1/namespaces/default/pods?dryRun=", "application/json"},
	{"POST", "/api/v1/namespaces/default/pods?fieldManager=dryRun", "application/json"},
	{"PUT", "/api/v1/namespaces/default/pods/p", "application/json"},
	{"PUT", "/api/v1/namespaces/default/pods/p/status?dryRun=All", "application/json"},
	{"PATCH", "/api/v1/namespaces/default/pods/p", "application/merge-patch+json"},
	{"PATCH", "/api/v1/namespaces/default/pods/p", "application/strategic-merge-patch+json"},
	{"PATCH", "/api/v1/namespaces/default/pods/p", "application/json-patch+json"},
	{"PATCH", "/api/v1/namespaces/default/pods/p?fieldManager=m", "application/apply-patch+yaml"},
	{"PATCH", "/api/v1/namespaces/default/pods/p/status", "application/apply-patch+yaml"},
	{"PATCH", "/api/v1/namespaces/default/pods/p", "application/apply-patch+yaml; charset=utf-8"},
	{"PATCH", "/api/v1/namespaces/default/pods/p", "application/apply-patch+cbor"},
	{"DELETE", "/api/v1/namespaces/default/pods/p", ""},
	{"DELETE", "/api/v1/namespaces/default/pods", ""},
	{"DELETE", "/api/v1/nodes", ""},
	{"DELETE", "/api/v1/namespaces/default/pods?dryRun=All", ""},
	{"GET", "/api/v1/namespaces/default/pods/p/log", ""},
	{"GET", "/api/v1/namespaces/default/pods/p/log?follow=true", ""},
	{"POST", "/api/v1/namespaces/default/pods/p/exec?command=ls", ""},
	{"GET", "/api/v1/namespaces/default/pods/p/exec?command=ls", ""},
	{"POST", "/api/v1/namespaces/default/pods/p/attach", ""},
	{"POST", "/api/v1/namespaces/default/pods/p/portforward", ""},
	{"GET", "/api/v1/namespaces/default/pods/p/proxy/some/path", ""},
	{"GET", "/api/v1/namespaces/default/services/s/proxy", ""},
	{"GET", "/api/v1/nodes/n1/proxy/metrics", ""},
	{"POST", "/api/v1/namespaces/default/pods/p/eviction", "application/json"},
	{"POST", "/api/v1/namespaces/default/pods/p/binding", "application/json"},
	{"GET", "/api/v1/namespaces/default/pods/p/ephemeralcontainers", ""},
	{"PUT", "/apis/apps/v1/namespaces/default/deployments/d/scale", "application/json"},
	{"GET", "/apis/apps/v1/deployments", ""},
	{"GET", "/apis/apps/v1/namespaces/default/deployments", ""},
	{"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "application/json"},
	{"POST", "/api/v1/namespaces/default/serviceaccounts/sa/token", "application/json"},
	{"GET", "/apis/stable.example.com/v1/namespaces/ns/crontabs/c", ""},
	{"GET", "/apis/stable.example.com/v1/crontabs", ""},
	{"OPTIONS", "/api/v1/namespaces/default/pods", ""},
	{"get", "/api/v1/namespaces/default/pods", ""},
	{"post", "/api/v1/namespaces/default/pods", ""},
	{"PROPFIND", "/api/v1/namespaces/default/pods/p", ""},
}

var upstreamInfo = &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}

func infoOf(t *testing.T, r *http.Request) *request.RequestInfo {
	t.Helper()
	info, err := upstreamInfo.NewRequestInfo(r)
	if err != nil {
		t.Fatalf("NewRequestInfo(%s %s): %v", r.Method, r.URL, err)
	}
	return info
}

func init() { metrics.Register() }

// recorded runs record with upstream's series reset and returns the
// labels of the one sample of name it left.
func recorded(t *testing.T, name string, record func()) map[string]string {
	t.Helper()
	metrics.Reset()
	record()
	return onlySample(t, legacyregistry.DefaultGatherer, name)
}

func onlySample(t *testing.T, g prometheus.Gatherer, name string) map[string]string {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		var got []map[string]string
		for _, m := range f.GetMetric() {
			if v := sampleValue(m); v != 0 {
				got = append(got, labelMap(m))
			}
		}
		if len(got) != 1 {
			t.Fatalf("%s has %d non-zero samples, want 1: %v", name, len(got), got)
		}
		return got[0]
	}
	t.Fatalf("no %s gathered", name)
	return nil
}

func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

func ourLabels(l apiserver.RequestLabels, code string, withDryRun bool) map[string]string {
	out := map[string]string{"verb": l.Verb, "group": l.Group, "version": l.Version, "resource": l.Resource,
		"subresource": l.Subresource, "scope": l.Scope, "component": l.Component}
	if withDryRun {
		out["dry_run"] = l.DryRun
	}
	if code != "" {
		out["code"] = code
	}
	return out
}

// installerVerb is the verb upstream's installer passes to the metrics of
// the route r reaches: WATCH and WATCHLIST for the deprecated /watch/
// paths, CONNECT for the connect subresources (and pods/log, whose storage
// overrides its GET), LIST for a collection's GET, else the method.
func installerVerb(r *http.Request, info *request.RequestInfo) string {
	switch {
	case strings.Contains(r.URL.Path, "/watch/") && strings.HasSuffix(r.URL.Path, "/p"):
		return metrics.MethodWatch
	case strings.Contains(r.URL.Path, "/watch/"):
		return metrics.MethodWatchList
	case slices.Contains([]string{"log", "exec", "attach", "portforward", "proxy"}, info.Subresource):
		return metrics.MethodConnect
	}
	method := strings.ToUpper(r.Method)
	if method == metrics.MethodGet && (info.Verb == "list" || info.Verb == "watch") {
		return metrics.MethodList
	}
	return method
}

// A resource request's apiserver_request_total and
// apiserver_request_duration_seconds labels are those upstream's
// MonitorRequest records for it, with the request info of upstream's
// RequestInfoFactory and the scope its installer gives the route (CleanScope
// of that info, the table having no name in a field selector).
func TestRequestLabelsAsUpstream(t *testing.T) {
	for _, tr := range resourceRequests {
		for _, code := range []int{200, 201, 404, 422, 429, 500, 504} {
			r := tr.new()
			info := infoOf(t, r)
			if !info.IsResourceRequest {
				t.Fatalf("%s %s is not a resource request upstream", tr.method, tr.url)
			}
			ctx := request.WithRequestInfo(r.Context(), info)
			scope := metrics.CleanScope(info)
			record := func() {
				metrics.MonitorRequest(r.WithContext(ctx), installerVerb(r, info), info.APIGroup, info.APIVersion, info.Resource,
					info.Subresource, scope, metrics.APIServerComponent, false, "", code, 0, time.Millisecond)
			}
			ours := apiserver.RequestMetricLabels(tr.new())
			want := recorded(t, "apiserver_request_total", record)
			if got := ourLabels(ours, strconv.Itoa(code), true); !cmp.Equal(got, want) {
				t.Errorf("%s %s (%s) code %d: labels (-want +got):\n%s", tr.method, tr.url, tr.contentType, code, cmp.Diff(want, got))
			}
			wantDuration := recorded(t, "apiserver_request_duration_seconds", record)
			if got := ourLabels(ours, "", true); !cmp.Equal(got, wantDuration) {
				t.Errorf("%s %s (%s): duration labels (-want +got):\n%s", tr.method, tr.url, tr.contentType, cmp.Diff(wantDuration, got))
			}
		}
	}
}

// The health endpoints are counted as upstream's healthz installs them:
// GET (whatever the method's case), the path as subresource, no scope or
// component.
func TestHealthLabelsAsUpstream(t *testing.T) {
	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		for _, method := range []string{"GET", "HEAD", "POST"} {
			r := httptest.NewRequest(method, path+"?verbose", nil)
			h := metrics.InstrumentHandlerFunc("GET", "", "", "", path, "", "", false, "", func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusOK)
			})
			want := recorded(t, "apiserver_request_total", func() {
				h(httptest.NewRecorder(), r.WithContext(request.WithRequestInfo(r.Context(), infoOf(t, r))))
			})
			if got := ourLabels(apiserver.RequestMetricLabels(httptest.NewRequest(method, path+"?verbose", nil)), "200", true); !cmp.Equal(got, want) {
				t.Errorf("%s %s: labels (-want +got):\n%s", method, path, cmp.Diff(want, got))
			}
		}
	}
}

var nonResourceRequests = []testRequest{
	{"GET", "/version", ""}, {"GET", "/api", ""}, {"GET", "/apis/apps", ""}, {"GET", "/openapi/v2", ""},
	{"POST", "/metrics", ""}, {"GET", "/apis/apps/v1", ""}, {"GET", "/healthz?dryRun=All", ""},
}

// selectorRequests name their object in a field selector, which upstream's
// request info takes as the request's name.
var selectorRequests = []testRequest{
	{"GET", "/api/v1/namespaces/default/pods?watch=true&fieldSelector=metadata.name%3Dp", ""},
	{"GET", "/api/v1/pods?watch=true&fieldSelector=metadata.name%3Dp", ""},
	{"GET", "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dp", ""},
	{"GET", "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dp%2Cspec.nodeName%3Dn", ""},
	{"DELETE", "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dp", ""},
}

// A request flow control refuses is counted as upstream's
// RecordDroppedRequest counts it.
func TestDroppedRequestLabelsAsUpstream(t *testing.T) {
	for _, tr := range slices.Concat(resourceRequests, selectorRequests, nonResourceRequests) {
		r := tr.new()
		info := infoOf(t, r)
		want := recorded(t, "apiserver_request_total", func() {
			metrics.RecordDroppedRequest(r, info, metrics.APIServerComponent, info.Verb != "get")
		})
		if got := ourLabels(apiserver.DroppedRequestMetricLabels(tr.new()), "429", true); !cmp.Equal(got, want) {
			t.Errorf("%s %s (%s): labels (-want +got):\n%s", tr.method, tr.url, tr.contentType, cmp.Diff(want, got))
		}
	}
}

// A long-running request is in apiserver_longrunning_requests with the
// labels upstream's RecordLongRunning gives it (a name in a field selector
// counts here).
func TestLongRunningLabelsAsUpstream(t *testing.T) {
	for _, tr := range slices.Concat(resourceRequests, selectorRequests, nonResourceRequests) {
		r := tr.new()
		info := infoOf(t, r)
		var want map[string]string
		metrics.Reset()
		metrics.RecordLongRunning(r, info, metrics.APIServerComponent, func() {
			want = onlySample(t, legacyregistry.DefaultGatherer, "apiserver_longrunning_requests")
		})
		if got := ourLabels(apiserver.LongRunningMetricLabels(tr.new()), "", false); !cmp.Equal(got, want) {
			t.Errorf("%s %s (%s): labels (-want +got):\n%s", tr.method, tr.url, tr.contentType, cmp.Diff(want, got))
		}
	}
}

// The series have upstream's help texts (with the stability prefix
// component-base gives them), types, label names and buckets.
func TestSeriesAsUpstream(t *testing.T) {
	ours := prometheus.NewRegistry()
	m := apiserver.NewRequestMetrics(ours)
	metrics.Reset()
	r := httptest.NewRequest("GET", "/api/v1/namespaces/default/pods", nil)
	info := infoOf(t, r)
	ctx := request.WithLatencyTrackers(request.WithUser(request.WithRequestInfo(r.Context(), info), &user.DefaultInfo{Name: user.APIServerUser}))
	metrics.MonitorRequest(r.WithContext(ctx), "LIST", "", "v1", "pods", "", "namespace", metrics.APIServerComponent, false, "", 200, 10, time.Millisecond)
	metrics.RecordLongRunning(r, info, metrics.APIServerComponent, func() {})
	metrics.RecordRequestTermination(r, info, metrics.APIServerComponent, 429)
	metrics.UpdateInflightRequestMetrics(metrics.ExecutingPhase, 1, 1)
	metrics.UpdateInflightRequestMetrics(metrics.WaitingPhase, 1, 1)
	upstream := families(t, legacyregistry.DefaultGatherer)
	m.RecordRequest(r, apiserver.SelfRequestUser, false, apiserver.FinishedRequest{Code: 200, Took: time.Millisecond, Size: 10})
	m.LongRunningStarted(apiserver.LongRunningMetricLabels(r))
	m.RecordTermination(r, metrics.APIServerComponent, 429)
	m.QueueNote()
	mine := families(t, ours)
	for _, name := range []string{"apiserver_request_total", "apiserver_request_duration_seconds", "apiserver_longrunning_requests",
		"apiserver_current_inflight_requests", "apiserver_request_sli_duration_seconds", "apiserver_response_sizes",
		"apiserver_selfrequest_total", "apiserver_request_terminations_total", "apiserver_current_inqueue_requests"} {
		u, o := upstream[name], mine[name]
		if u == nil || o == nil {
			t.Fatalf("%s: upstream has it %v, we have it %v", name, u != nil, o != nil)
		}
		if u.GetHelp() != o.GetHelp() || u.GetType() != o.GetType() {
			t.Errorf("%s: help %q type %v, want %q %v", name, o.GetHelp(), o.GetType(), u.GetHelp(), u.GetType())
		}
		if want, got := labelNames(u), labelNames(o); !cmp.Equal(want, got) {
			t.Errorf("%s: labels %v, want %v", name, got, want)
		}
		if want, got := bucketBounds(u), bucketBounds(o); !cmp.Equal(want, got) {
			t.Errorf("%s: buckets %v, want %v", name, got, want)
		}
	}
}

func families(t *testing.T, g prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func bucketBounds(f *dto.MetricFamily) []float64 {
	var out []float64
	for _, m := range f.GetMetric() {
		if m.Histogram == nil {
			continue
		}
		for _, b := range m.Histogram.GetBucket() {
			out = append(out, b.GetUpperBound())
		}
		return out
	}
	return out
}

// labelNames are the label names of f's first sample.
func labelNames(f *dto.MetricFamily) []string {
	var out []string
	for _, lp := range f.GetMetric()[0].GetLabel() {
		out = append(out, lp.GetName())
	}
	return out
}
