package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// admitd serve exposes kube-apiserver's build, feature-gate, Go runtime,
// long-running request, request body, watch event and authentication
// families, with series that follow real requests.
func TestMetricFamiliesServed(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage, o.KubeconfigOut = t.TempDir(), 0, "memory", "-"
	o.Logger = quietLogger()
	o.FeatureGates = "NativeHistograms=false"
	s, admin := startWith(t, o)
	cs := kubernetes.NewForConfigOrDie(admin)

	t.Run("build and gates", func(t *testing.T) {
		v, err := cs.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		wantMetrics(t, s, admin, buildInfoSeries(v),
			`kubernetes_feature_enabled{name="NativeHistograms",stage="BETA"} 0`+"\n",
			`kubernetes_feature_enabled{name="APIResponseCompression",stage="BETA"} 1`+"\n",
			`kubernetes_feature_enabled{name="AggregatedDiscoveryRemoveBetaType",stage="DEPRECATED"} 1`+"\n",
			`kubernetes_feature_enabled{name="APIServingWithRoutine",stage="ALPHA"} 0`+"\n",
			// the Go collector's runtime/metrics families
			"# TYPE go_sched_latencies_seconds histogram\n", "# TYPE go_gc_heap_goal_bytes gauge\n",
			"# TYPE go_cpu_classes_gc_total_cpu_seconds_total counter\n")
	})

	t.Run("watch and body", func(t *testing.T) {
		watchAndCreatePodTemplate(t, s, admin, cs)
	})

	t.Run("authentication", func(t *testing.T) {
		before := metricValues(t, scrape(t, s, admin), "authentication_attempts", "authentication_duration_seconds_count")
		anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		for _, token := range []string{"", "not-a-token"} {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+"/api", nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := anonymous.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("GET /api with token %q = %d, want 401", token, resp.StatusCode)
			}
		}
		after := metricValues(t, scrape(t, s, admin), "authentication_attempts", "authentication_duration_seconds_count")
		// no credential (anonymous is off): a failure; a rejected token: an error
		for _, series := range []string{`authentication_attempts{result="failure"}`, `authentication_attempts{result="error"}`,
			`authentication_duration_seconds_count{result="failure"}`, `authentication_duration_seconds_count{result="error"}`} {
			if got := after[series] - before[series]; got != 1 {
				t.Errorf("%s rose by %v, want 1", series, got)
			}
		}
		// admitd's admin and its loopback clients are neither admin, client,
		// kube_proxy, kubelet, kube-system's default service account nor an
		// address
		users := metricValues(t, scrape(t, s, admin), "authenticated_user_requests")
		if len(users) != 1 || users[`authenticated_user_requests{username="other"}`] == 0 {
			t.Errorf("authenticated_user_requests = %v, want only username=\"other\"", users)
		}
	})
}

func buildInfoSeries(v *version.Info) string {
	return fmt.Sprintf(`kubernetes_build_info{build_date=%q,compiler=%q,git_commit=%q,git_tree_state=%q,git_version=%q,go_version=%q,major=%q,minor=%q,platform=%q} 1`+"\n",
		v.BuildDate, v.Compiler, v.GitCommit, v.GitTreeState, v.GitVersion, v.GoVersion, v.Major, v.Minor, v.Platform)
}

// watchAndCreatePodTemplate opens a watch of pod templates, which nothing
// else in the server creates, and checks the long-running gauge while it
// is open and once it is closed, the watch event series against the bytes
// read, and the body size of a create of about 70 KB.
func watchAndCreatePodTemplate(t *testing.T, s *Server, admin *rest.Config, cs kubernetes.Interface) {
	const gauge = `apiserver_longrunning_requests{component="apiserver",group="",resource="podtemplates",scope="namespace",subresource="",verb="WATCH",version="v1"}`
	hc, err := rest.HTTPClientFor(admin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/namespaces/default/podtemplates?watch=true", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	waitForMetric(t, s, admin, gauge, 1)

	big := strings.Repeat("x", 70000)
	pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "sized", Annotations: map[string]string{"big": big}},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}}
	if _, err := cs.CoreV1().PodTemplates("default").Create(t.Context(), pt, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReaderSize(resp.Body, 1<<17).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var ev struct{ Type string }
	if err := json.Unmarshal(line, &ev); err != nil || ev.Type != "ADDED" {
		t.Fatalf("first event %.80s: %v, want ADDED", line, err)
	}
	labels := `{group="",resource="podtemplates",version="v1"}`
	body := `apiserver_request_body_size_bytes_bucket{group="",resource="podtemplates",verb="create",le=`
	// the event is counted once its write returns, which may be after the
	// client has read it
	eventuallyMetrics(t, s, admin,
		"apiserver_watch_events_total"+labels+" 1\n",
		"apiserver_watch_events_sizes_sum"+labels+" "+strconv.Itoa(len(line))+"\n",
		`apiserver_watch_events_sizes_bucket{group="",resource="podtemplates",version="v1",le="65536"} 0`+"\n",
		`apiserver_watch_events_sizes_bucket{group="",resource="podtemplates",version="v1",le="131072"} 1`+"\n",
		body+`"50000"} 0`+"\n", body+`"150000"} 1`+"\n")
	cancel()
	waitForMetric(t, s, admin, gauge, 0)
}

// eventuallyMetrics waits up to 10 seconds for /metrics to hold every
// line of series.
func eventuallyMetrics(t *testing.T, s *Server, admin *rest.Config, series ...string) {
	t.Helper()
	var missing []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		body := scrape(t, s, admin)
		missing = missing[:0]
		for _, want := range series {
			if !strings.Contains(body, want) {
				missing = append(missing, want)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s /metrics lacks %q", missing)
		}
	}
}

// waitForMetric waits up to 10 seconds for series to have value want.
func waitForMetric(t *testing.T, s *Server, admin *rest.Config, series string, want float64) {
	t.Helper()
	name := series[:strings.IndexByte(series, '{')]
	var got map[string]float64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got = metricValues(t, scrape(t, s, admin), name)
		if v, ok := got[series]; ok && v == want {
			return
		}
	}
	t.Fatalf("%s = %v, want %v", series, got[series], want)
}

var seriesLine = regexp.MustCompile(`(?m)^([a-z_]+\{[^}]*\}) (\S+)$`)

// metricValues are the values of the series of the named families in a
// scrape, by series.
func metricValues(t *testing.T, body string, names ...string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range seriesLine.FindAllStringSubmatch(body, -1) {
		name := m[1][:strings.IndexByte(m[1], '{')]
		for _, n := range names {
			if name == n {
				v, err := strconv.ParseFloat(m[2], 64)
				if err != nil {
					t.Fatalf("%s: %v", m[0], err)
				}
				out[m[1]] = v
			}
		}
	}
	return out
}
