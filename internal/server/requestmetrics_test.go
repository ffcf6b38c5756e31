package server

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// admitd serve counts API requests in kube-apiserver's per-request series
// on /metrics.
func TestRequestMetricsServed(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = quietLogger()
	s, admin := startWith(t, o)
	cs := kubernetes.NewForConfigOrDie(admin)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "metered"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().LimitRanges("default").Get(t.Context(), "metered", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("GET of a missing limit range: %v, want 404", err)
	}
	if _, err := cs.CoreV1().PodTemplates("").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	wantMetrics(t, s, admin,
		`apiserver_request_total{code="201",component="apiserver",dry_run="All",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 1`+"\n",
		`apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="limitranges",scope="resource",subresource="",verb="GET",version="v1"} 1`+"\n",
		`apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="podtemplates",scope="cluster",subresource="",verb="LIST",version="v1"} 1`+"\n",
		`apiserver_request_duration_seconds_count{component="apiserver",dry_run="All",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 1`+"\n",
		// The GET and LIST responses are sized.
		`apiserver_response_sizes_count{component="apiserver",group="",resource="limitranges",scope="resource",subresource="",verb="GET",version="v1"} 1`+"\n",
		`apiserver_response_sizes_count{component="apiserver",group="",resource="podtemplates",scope="cluster",subresource="",verb="LIST",version="v1"} 1`+"\n",
		`apiserver_request_sli_duration_seconds_count{component="apiserver",group="",resource="podtemplates",scope="cluster",subresource="",verb="LIST",version="v1"} 1`+"\n")
}

func scrape(t *testing.T, s *Server, admin *rest.Config) string {
	t.Helper()
	hc, err := rest.HTTPClientFor(admin)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, body)
	}
	return string(body)
}

// The server's own loopback requests (its controllers acting as
// system:apiserver) are counted in apiserver_selfrequest_total.
func TestSelfRequestsServed(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = quietLogger()
	s, admin := startWith(t, o)
	self := regexp.MustCompile(`(?m)^apiserver_selfrequest_total\{group="[^"]*",resource="[^"]*",subresource="[^"]*",verb="[A-Z]+"\} [1-9]`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		body := scrape(t, s, admin)
		if self.MatchString(body) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no self-request counted:\n%s", body)
		}
	}
}

// apiserver_current_inflight_requests is sampled every second under API
// Priority and Fairness: a scrape, itself a read-only request executing,
// shows in the sample after it; apiserver_current_inqueue_requests is
// served too, as under upstream's APF.
func TestInflightRequestsSampled(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = quietLogger()
	s, admin := startWith(t, o)
	busy := regexp.MustCompile(`(?m)^apiserver_current_inflight_requests\{request_kind="readOnly"\} [1-9]`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		body := scrape(t, s, admin)
		if busy.MatchString(body) && strings.Contains(body, `apiserver_current_inflight_requests{request_kind="mutating"}`) &&
			strings.Contains(body, `apiserver_current_inqueue_requests{request_kind="readOnly"}`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sample of the scrapes in apiserver_current_inflight_requests:\n%s", body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A request the aggregation layer's proxy answers itself (its APIService
// is not available) is counted in apiserver_request_terminations_total
// with component aggregator, as kube-aggregator's proxy counts it.
func TestAggregatorTerminationsCounted(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = quietLogger()
	s, admin := startWith(t, o)
	hc, err := rest.HTTPClientFor(admin)
	if err != nil {
		t.Fatal(err)
	}
	const apiService = `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1alpha1.wardle.example.com"},
		"spec":{"group":"wardle.example.com","version":"v1alpha1","service":{"namespace":"default","name":"nowhere","port":443},
		"insecureSkipTLSVerify":true,"groupPriorityMinimum":1000,"versionPriority":15}}`
	resp, err := hc.Post(s.URL+"/apis/apiregistration.k8s.io/v1/apiservices", "application/json", strings.NewReader(apiService))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("creating the APIService: %d", resp.StatusCode)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := hc.Get(s.URL + "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 503 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("flunders of an unavailable APIService: %d, want the proxy's 503", resp.StatusCode)
		}
	}
	wantMetrics(t, s, admin,
		`apiserver_request_terminations_total{code="503",component="aggregator",group="wardle.example.com",resource="flunders",scope="namespace",subresource="",verb="LIST",version="v1alpha1"} `)
}
