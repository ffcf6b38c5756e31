package requestmetrics

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/admitd/admitd/internal/apiserver"
	"github.com/admitd/admitd/pkg/admission"
)

// finishedSeries are the series a finished request counts in.
var finishedSeries = []string{"apiserver_request_total", "apiserver_request_duration_seconds", "apiserver_request_sli_duration_seconds",
	"apiserver_response_sizes", "apiserver_selfrequest_total"}

// webhookCalls are the admission webhook calls of every request of the
// table: two mutating ones (upstream adds them up) and two validating ones
// (it takes the longest); queueWait its wait in a flow-control queue.
var webhookCalls = []struct {
	mutating bool
	took     time.Duration
}{{true, 30 * time.Millisecond}, {true, 20 * time.Millisecond}, {false, 40 * time.Millisecond}, {false, 10 * time.Millisecond}}

const queueWait = 100 * time.Millisecond

// upstreamFinished records a finished request as kube-apiserver does: the
// latency trackers (which its filter gives every request but a watch) hold
// the webhook calls and the queue wait, and the route's MonitorRequest
// records it.
func upstreamFinished(t *testing.T, r *http.Request, userName string, code, size int, took time.Duration) {
	info := infoOf(t, r)
	ctx := request.WithUser(request.WithRequestInfo(r.Context(), info), &user.DefaultInfo{Name: userName})
	if info.Verb != "watch" {
		ctx = request.WithLatencyTrackers(ctx)
		lt, _ := request.LatencyTrackersFrom(ctx)
		for _, c := range webhookCalls {
			if c.mutating {
				lt.MutatingWebhookTracker.TrackDuration(c.took)
			} else {
				lt.ValidatingWebhookTracker.TrackDuration(c.took)
			}
		}
		lt.APFQueueWaitTracker.TrackDuration(queueWait)
	}
	r = r.WithContext(ctx)
	if !info.IsResourceRequest { // a health endpoint, as healthz installs it
		metrics.MonitorRequest(r, "GET", "", "", "", info.Path, "", "", false, "", code, size, took)
		return
	}
	metrics.MonitorRequest(r, installerVerb(r, info), info.APIGroup, info.APIVersion, info.Resource, info.Subresource,
		metrics.CleanScope(info), metrics.APIServerComponent, false, "", code, size, took)
}

// ourFinished records the same request in m, the webhook calls noted in
// an admission record as the webhook plugins note them.
func ourFinished(m *apiserver.RequestMetrics, r *http.Request, userName string, code, size int, took time.Duration) {
	rec := admission.NewRecord()
	for _, c := range webhookCalls {
		rec.AddWebhookCall(c.mutating, c.took)
	}
	m.RecordRequest(r, userName, false, apiserver.FinishedRequest{Code: code, Took: took, Size: int64(size),
		Excluded: rec.WebhookTime() + queueWait})
}

// Every request of the tables, from system:apiserver and from another
// user, with response sizes and times on and between the bucket bounds,
// leaves the same samples (labels, counts, sums, buckets) in the finished
// request's series as upstream's MonitorRequest: the SLI duration without
// the webhooks and the queue wait and not for a dry run or a watch, the
// size on the GET and LIST routes only, the self-requests by user name.
func TestFinishedRequestValuesAsUpstream(t *testing.T) {
	ours := prometheus.NewRegistry()
	m := apiserver.NewRequestMetrics(ours)
	metrics.Reset()
	health := []testRequest{{"GET", "/healthz", ""}, {"GET", "/readyz?verbose", ""}, {"HEAD", "/livez", ""}, {"GET", "/healthz?dryRun=All", ""}}
	sizes := []int{0, 999, 1000, 1001, 250_000, 10_000_000, 2_000_000_000}
	times := []time.Duration{190 * time.Millisecond, 240 * time.Millisecond, 250 * time.Millisecond, 1190 * time.Millisecond, 75 * time.Second}
	n := 0
	for _, tr := range slices.Concat(resourceRequests, health) {
		for _, userName := range []string{user.APIServerUser, "alice"} {
			code, size, took := []int{200, 201, 404, 500}[n%4], sizes[n%len(sizes)], times[n%len(times)]
			n++
			upstreamFinished(t, tr.new(), userName, code, size, took)
			ourFinished(m, tr.new(), userName, code, size, took)
		}
	}
	want, got := samples(t, legacyregistry.DefaultGatherer, finishedSeries), samples(t, ours, finishedSeries)
	if diff := cmp.Diff(want, got, cmp.Comparer(closeEnough)); diff != "" {
		t.Errorf("samples (-upstream +ours):\n%s", diff)
	}
	for _, name := range finishedSeries {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(got)), func(k string) bool { return strings.HasPrefix(k, name+"{") }) {
			t.Errorf("no sample of %s: the table does not exercise it", name)
		}
	}
}

// A request the server terminates (refused by flow control or the
// in-flight limit, timed out, or answered by the aggregation layer's proxy
// itself) is counted with the labels and code of upstream's
// RecordRequestTermination.
func TestTerminationLabelsAsUpstream(t *testing.T) {
	for _, tr := range slices.Concat(resourceRequests, selectorRequests, nonResourceRequests) {
		for _, term := range []struct {
			component string
			code      int
		}{{metrics.APIServerComponent, http.StatusTooManyRequests}, {metrics.APIServerComponent, http.StatusGatewayTimeout},
			{"aggregator", http.StatusServiceUnavailable}} { // kube-aggregator's proxy
			r := tr.new()
			want := recorded(t, "apiserver_request_terminations_total", func() {
				metrics.RecordRequestTermination(r, infoOf(t, r), term.component, term.code)
			})
			ours := prometheus.NewRegistry()
			apiserver.NewRequestMetrics(ours).RecordTermination(tr.new(), term.component, term.code)
			if got := onlySample(t, ours, "apiserver_request_terminations_total"); !cmp.Equal(got, want) {
				t.Errorf("%s %s %s code %d: labels (-want +got):\n%s", tr.method, tr.url, term.component, term.code, cmp.Diff(want, got))
			}
		}
	}
}

// A refused request is counted in apiserver_request_total alone, as
// upstream's RecordDroppedRequest counts it: not in the durations, sizes or
// self-requests.
func TestDroppedRequestSeriesAsUpstream(t *testing.T) {
	ours := prometheus.NewRegistry()
	m := apiserver.NewRequestMetrics(ours)
	metrics.Reset()
	for _, tr := range resourceRequests {
		r := tr.new()
		info := infoOf(t, r)
		metrics.RecordDroppedRequest(r.WithContext(request.WithUser(r.Context(), &user.DefaultInfo{Name: user.APIServerUser})), info,
			metrics.APIServerComponent, info.Verb != "get")
		m.RecordRequest(tr.new(), apiserver.SelfRequestUser, true, apiserver.FinishedRequest{Code: http.StatusTooManyRequests, Took: time.Second, Size: 5000})
	}
	want, got := samples(t, legacyregistry.DefaultGatherer, finishedSeries), samples(t, ours, finishedSeries)
	if diff := cmp.Diff(want, got, cmp.Comparer(closeEnough)); diff != "" {
		t.Errorf("samples (-upstream +ours):\n%s", diff)
	}
}

// sample is one series' value: a counter's or gauge's, or a histogram's
// count, sum and cumulative bucket counts.
type sample struct {
	Value, Sum float64
	Count      uint64
	Buckets    []uint64
}

func closeEnough(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)) }

// samples are the series of the named families in g, keyed by name and
// labels.
func samples(t *testing.T, g prometheus.Gatherer, names []string) map[string]sample {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]sample{}
	for _, f := range fams {
		if !slices.Contains(names, f.GetName()) {
			continue
		}
		for _, m := range f.GetMetric() {
			var s sample
			switch {
			case m.Counter != nil:
				s.Value = m.Counter.GetValue()
			case m.Gauge != nil:
				s.Value = m.Gauge.GetValue()
			case m.Histogram != nil:
				s.Count, s.Sum = m.Histogram.GetSampleCount(), m.Histogram.GetSampleSum()
				for _, b := range m.Histogram.GetBucket() {
					s.Buckets = append(s.Buckets, b.GetCumulativeCount())
				}
			}
			if s.Value == 0 && s.Count == 0 {
				continue // a series upstream's Reset left at zero
			}
			out[f.GetName()+labelString(m)] = s
		}
	}
	return out
}

func labelString(m *dto.Metric) string {
	var parts []string
	for _, lp := range m.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}
