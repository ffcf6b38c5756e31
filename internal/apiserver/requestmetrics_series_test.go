package apiserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// configMapSeries are the labels of a configmaps series without dry_run
// and code, in the registry's order.
func configMapSeries(verb, scope string) string {
	return fmt.Sprintf(`{component="apiserver",group="",resource="configmaps",scope=%q,subresource="",verb=%q,version="v1"}`, scope, verb)
}

// webhookStandIn stands for an admission webhook: it notes a call of
// callTime in the request's record, as the webhook plugins do, without
// taking that time.
type webhookStandIn struct{ callTime time.Duration }

func (webhookStandIn) Handles(admission.Operation) bool { return true }

func (w webhookStandIn) Admit(_ context.Context, a *admission.Attributes) error {
	a.Record.AddWebhookCall(true, w.callTime)
	return nil
}

func newMeteredServer(t *testing.T, plugins ...admission.NamedPlugin) (*testServer, *prometheus.Registry, Config) {
	t.Helper()
	reg := prometheus.NewRegistry()
	cfg := testConfig(memory.New(), registry.NewCatalogue(), plugins...)
	cfg.RequestMetrics = NewRequestMetrics(reg)
	return &testServer{t: t, s: newBootstrapped(t, cfg)}, reg, cfg
}

func newBootstrapped(t *testing.T, cfg Config) *Server {
	t.Helper()
	s := New(cfg)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	return s
}

// The body sizes of GET and LIST responses are in apiserver_response_sizes
// (not a create's); apiserver_request_sli_duration_seconds counts every
// request but a dry run, without the time of its webhook calls.
func TestResponseSizesAndSLI(t *testing.T) {
	const webhookTime = 2 * time.Minute // longer than any request: its SLI time is negative
	ts, reg, _ := newMeteredServer(t, admission.NamedPlugin{Name: "webhook", Plugin: webhookStandIn{webhookTime}})
	const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`
	ts.must(201, "POST", "/api/v1/namespaces/default/configmaps", "application/json", cm)
	ts.must(201, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All", "application/json", strings.Replace(cm, `"a"`, `"b"`, 1))
	got := ts.do("GET", "/api/v1/namespaces/default/configmaps/a", "", "").Body.Len()
	list := ts.do("GET", "/api/v1/namespaces/default/configmaps", "", "").Body.Len()
	health := ts.do("GET", "/healthz", "", "").Body.Len()
	body := gather(t, reg)
	for _, want := range []string{
		"apiserver_response_sizes_sum" + configMapSeries("GET", "resource") + " " + strconv.Itoa(got),
		"apiserver_response_sizes_sum" + configMapSeries("LIST", "namespace") + " " + strconv.Itoa(list),
		`apiserver_response_sizes_bucket{component="apiserver",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1",le="1000"} 1`,
		`apiserver_response_sizes_sum{component="",group="",resource="",scope="",subresource="/healthz",verb="GET",version=""} ` + strconv.Itoa(health),
		// The create, not its dry run, whose webhook time is left out.
		"apiserver_request_sli_duration_seconds_count" + configMapSeries("POST", "resource") + " 1",
		"apiserver_request_sli_duration_seconds_bucket" + configMapSeries("POST", "resource")[:len(configMapSeries("POST", "resource"))-1] + `,le="0.05"} 1`,
		"apiserver_request_sli_duration_seconds_count" + configMapSeries("GET", "resource") + " 1",
		"# HELP apiserver_response_sizes [STABLE] Response size distribution in bytes",
		"# HELP apiserver_request_sli_duration_seconds [ALPHA] Response latency distribution (not counting webhook duration",
	} {
		if !strings.HasPrefix(want, "#") {
			want += "\n"
		}
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "apiserver_response_sizes_count"+configMapSeries("POST", "resource")) {
		t.Error("a create's response is sized; upstream sizes GET and LIST responses only")
	}
	sum := regexp.MustCompile(`apiserver_request_sli_duration_seconds_sum` + regexp.QuoteMeta(configMapSeries("POST", "resource")) + ` (\S+)`).FindStringSubmatch(body)
	if sum == nil {
		t.Fatalf("no SLI sum of the create:\n%s", body)
	}
	if v, _ := strconv.ParseFloat(sum[1], 64); v > -webhookTime.Seconds()+10 {
		t.Errorf("SLI time of the create %v s: the webhook's %v is not left out", v, webhookTime)
	}
}

// Requests of the server's own loopback user, system:apiserver, are
// counted in apiserver_selfrequest_total; another user's are not.
func TestSelfRequestsCounted(t *testing.T) {
	ts, reg, _ := newMeteredServer(t)
	for _, user := range []string{SelfRequestUser, "system:kube-controller-manager"} {
		rt := ts.s.Loopback(authenticationv1.UserInfo{Username: user, Groups: []string{"system:masters"}})
		req := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: LIST = %d", user, resp.StatusCode)
		}
	}
	body := gather(t, reg)
	if want := `apiserver_selfrequest_total{group="",resource="configmaps",subresource="",verb="LIST"} 1` + "\n"; !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %s", want)
	}
	if want := requestSeriesLine("LIST", "", "configmaps", "", "namespace", "apiserver", "200", 2) + "\n"; !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// blockingHandler holds each request until release is closed or the
// request ends, telling started when it begins.
func blockingHandler(started chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
}

// A request the in-flight limit refuses is counted as terminated with 429,
// and only in apiserver_request_total beside; one that runs out of time
// as terminated with 504.
func TestTerminationsCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.RequestMetrics = NewRequestMetrics(reg)
	cfg.MaxRequestsInflight = 1
	started, release := make(chan struct{}, 2), make(chan struct{})
	cfg.Extra = map[string]http.Handler{"/block": blockingHandler(started, release), "/stall": blockingHandler(started, nil)}
	ts := &testServer{t: t, s: newBootstrapped(t, cfg)}
	done := make(chan struct{})
	go func() { defer close(done); ts.do("GET", "/block", "", "") }()
	<-started
	if w := ts.do("GET", "/api/v1/namespaces/default/configmaps", "", ""); w.Code != http.StatusTooManyRequests {
		t.Fatalf("LIST past the in-flight limit = %d, want 429", w.Code)
	}
	close(release)
	<-done
	if w := ts.do("GET", "/stall?timeout=50ms", "", ""); w.Code != http.StatusGatewayTimeout {
		t.Fatalf("GET /stall past its timeout = %d, want 504", w.Code)
	}
	body := gather(t, reg)
	for _, want := range []string{
		`apiserver_request_terminations_total{code="429",component="apiserver",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"} 1`,
		`apiserver_request_terminations_total{code="504",component="apiserver",group="",resource="",scope="",subresource="/stall",verb="GET",version=""} 1`,
		`apiserver_request_total{code="429",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"} 1`,
		"# HELP apiserver_request_terminations_total [ALPHA] Number of requests which apiserver terminated in self-defense.",
	} {
		if !strings.HasPrefix(want, "#") {
			want += "\n"
		}
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "apiserver_request_duration_seconds_count"+configMapSeries("LIST", "namespace")[:len(configMapSeries("LIST", "namespace"))-1]) {
		t.Error("a refused request is in apiserver_request_duration_seconds; upstream counts it in apiserver_request_total only")
	}
}

// apiserver_current_inqueue_requests is not served until flow control
// asks for the queue note; then each sample is the most requests of each
// kind that waited at once since the one before.
func TestInqueueRequestsSampled(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewRequestMetrics(reg)
	m.publishInflight()
	if body := gather(t, reg); strings.Contains(body, "apiserver_current_inqueue_requests{") {
		t.Fatalf("apiserver_current_inqueue_requests served without flow control:\n%s", body)
	}
	note := m.QueueNote()
	note(true, 1)
	note(true, 1)
	note(true, -1)
	note(false, 1)
	note(false, -1)
	// The second sample is 0 though a read-only request still waits: as
	// upstream's watermark, a mark is noted when the number changes.
	for _, want := range [][2]int{{2, 1}, {0, 0}} {
		m.publishInflight()
		body := gather(t, reg)
		for kind, n := range map[string]int{"readOnly": want[0], "mutating": want[1]} {
			if line := fmt.Sprintf("apiserver_current_inqueue_requests{request_kind=%q} %d\n", kind, n); !strings.Contains(body, line) {
				t.Errorf("/metrics lacks %s", line)
			}
		}
	}
}
