package server

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
)

// admitd serve exposes kube-apiserver's object counts, storage size,
// storage list, workqueue, authorization, audit and TLS handshake
// families, with upstream's types and with series that follow real
// requests.
func TestServedWorkMetricFamilies(t *testing.T) {
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.KubeconfigOut = t.TempDir(), 0, "-"
	o.Logger = quietLogger()
	o.Etcd.CountMetricPollPeriod = 50 * time.Millisecond
	o.AuditLogPath, o.AuditPolicyFile = filepath.Join(o.DataDir, "audit.log"), filepath.Join(o.DataDir, "policy.yaml")
	// only the gets of pod templates are audited: two events each
	policy := "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  verbs: [get]\n  resources: [{group: \"\", resources: [podtemplates]}]\n"
	if err := os.WriteFile(o.AuditPolicyFile, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	s, admin := startWith(t, o)
	cs := kubernetes.NewForConfigOrDie(admin)

	t.Run("types", func(t *testing.T) {
		body := scrape(t, s, admin)
		for family, typ := range map[string]string{
			"apiserver_resource_objects": "gauge", "apiserver_storage_size_bytes": "gauge",
			"apiserver_storage_list_total": "counter", "apiserver_storage_list_fetched_objects_total": "counter",
			"apiserver_storage_list_evaluated_objects_total": "counter", "apiserver_storage_list_returned_objects_total": "counter",
			"apiserver_storage_list_duration_seconds": "histogram",
			"workqueue_depth":                         "gauge", "workqueue_adds_total": "counter", "workqueue_retries_total": "counter",
			"workqueue_queue_duration_seconds": "histogram", "workqueue_work_duration_seconds": "histogram",
			"workqueue_unfinished_work_seconds": "gauge", "workqueue_longest_running_processor_seconds": "gauge",
			"authorization_attempts_total": "counter", "authorization_duration_seconds": "histogram",
			"apiserver_audit_event_total": "counter", "apiserver_tls_handshake_errors_total": "counter",
			"apiserver_client_certificate_expiration_seconds": "histogram", "aggregator_unavailable_apiservice": "gauge",
			"kube_apiserver_clusterip_allocator_allocated_ips": "gauge", "kube_apiserver_clusterip_allocator_available_ips": "gauge",
			"kube_apiserver_clusterip_allocator_allocation_total": "counter", "kube_apiserver_clusterip_allocator_allocation_duration_seconds": "histogram",
			"kube_apiserver_nodeport_allocator_allocated_ports": "gauge", "kube_apiserver_nodeport_allocator_available_ports": "gauge",
			"version_info": "gauge",
		} {
			if want := fmt.Sprintf("# TYPE %s %s\n", family, typ); !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})

	t.Run("object counts", func(t *testing.T) {
		objects := `apiserver_resource_objects{group="",resource="podtemplates"}`
		waitForMetric(t, s, admin, objects, 0)
		for _, name := range []string{"a", "b"} {
			createPodTemplate(t, cs, name, nil)
		}
		waitForMetric(t, s, admin, objects, 2)
		if err := cs.CoreV1().PodTemplates("default").Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitForMetric(t, s, admin, objects, 1)
	})

	t.Run("storage lists", func(t *testing.T) {
		createPodTemplate(t, cs, "picked", map[string]string{"pick": "yes"})
		// podtemplates "b" and "picked" are stored; the selector keeps one
		families := []string{"apiserver_storage_list_total", "apiserver_storage_list_fetched_objects_total",
			"apiserver_storage_list_evaluated_objects_total", "apiserver_storage_list_returned_objects_total",
			"apiserver_storage_list_duration_seconds_count"}
		before := metricValues(t, scrape(t, s, admin), families...)
		list, err := cs.CoreV1().PodTemplates("").List(t.Context(), metav1.ListOptions{LabelSelector: "pick=yes"})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("list = %v, %v; want one pod template", list, err)
		}
		after := metricValues(t, scrape(t, s, admin), families...)
		const withIndex = `{group="",index="",resource="podtemplates",storage="etcd"}`
		const byStorage = `{group="",resource="podtemplates",storage="etcd"}`
		for series, want := range map[string]float64{
			"apiserver_storage_list_total" + withIndex:                                                         1,
			"apiserver_storage_list_fetched_objects_total" + withIndex:                                         2,
			"apiserver_storage_list_evaluated_objects_total" + byStorage:                                       2,
			"apiserver_storage_list_returned_objects_total" + byStorage:                                        1,
			`apiserver_storage_list_duration_seconds_count{group="",resource="podtemplates",streamed="false"}`: 1,
		} {
			if got := after[series] - before[series]; got != want {
				t.Errorf("%s rose by %v, want %v", series, got, want)
			}
		}
	})

	t.Run("authorization, audit and TLS", func(t *testing.T) {
		checkAuthorizationAuditAndTLS(t, s, admin, cs)
	})

	t.Run("client certificates", func(t *testing.T) {
		checkClientCertificateLifetimes(t, s, admin, cs)
	})

	t.Run("unavailable apiservices", func(t *testing.T) {
		// a built-in group version is served here; one whose Service is
		// missing is not
		waitForMetric(t, s, admin, `aggregator_unavailable_apiservice{name="v1."}`, 0)
		svc := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.missing.example.com"},
			Spec: apiregistrationv1.APIServiceSpec{Group: "missing.example.com", Version: "v1alpha1", GroupPriorityMinimum: 100, VersionPriority: 10,
				Service: &apiregistrationv1.ServiceReference{Namespace: "default", Name: "missing"}, InsecureSkipTLSVerify: true}}
		if _, err := aggregatorclient.NewForConfigOrDie(admin).ApiregistrationV1().APIServices().Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitForMetric(t, s, admin, `aggregator_unavailable_apiservice{name="v1alpha1.missing.example.com"}`, 1)
	})

	t.Run("cluster IPs", func(t *testing.T) {
		checkClusterIPAllocations(t, s, admin, cs)
	})

	t.Run("version info", func(t *testing.T) {
		v, err := cs.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`version_info{binary=%q,component="kube",emulation="%s.%s",min_compat="1.36"} 1`+"\n",
			strings.TrimPrefix(v.GitVersion, "v"), v.Major, v.Minor)
		wantMetrics(t, s, admin, want)
	})

	t.Run("node ports", func(t *testing.T) {
		allocated, available := "kube_apiserver_nodeport_allocator_allocated_ports", "kube_apiserver_nodeport_allocator_available_ports"
		body := scrape(t, s, admin)
		before := []float64{unlabelledValue(t, body, allocated), unlabelledValue(t, body, available)}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ported"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 81}}}}
		if _, err := cs.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		body = scrape(t, s, admin)
		if got := unlabelledValue(t, body, allocated) - before[0]; got != 2 {
			t.Errorf("%s rose by %v, want 2", allocated, got)
		}
		if got := unlabelledValue(t, body, available) - before[1]; got != -2 {
			t.Errorf("%s changed by %v, want -2", available, got)
		}
		if got := unlabelledValue(t, body, allocated) + unlabelledValue(t, body, available); got != 2768 {
			t.Errorf("allocated and available node ports add up to %v, want the 2768 of 30000-32767", got)
		}
	})

	t.Run("storage size", func(t *testing.T) {
		// the size is the embedded store's file when /metrics is scraped
		series := `apiserver_storage_size_bytes{storage_cluster_id="etcd-0"}`
		var got float64
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			fi, err := os.Stat(boltPath(o))
			if err != nil {
				t.Fatal(err)
			}
			got = metricValues(t, scrape(t, s, admin), "apiserver_storage_size_bytes")[series]
			if got == float64(fi.Size()) && got > 0 {
				return
			}
		}
		t.Fatalf("%s = %v, want the size of %s", series, got, boltPath(o))
	})

	t.Run("workqueues", func(t *testing.T) {
		// the namespace controller's queue, "namespace" as upstream's,
		// takes every namespace being deleted; the workqueue series are
		// the process's, so other servers of the test may add to them
		families := []string{"workqueue_adds_total", "workqueue_queue_duration_seconds_count", "workqueue_work_duration_seconds_count"}
		mustCreateNamespace(t, cs, "queued")
		before := metricValues(t, scrape(t, s, admin), families...)
		if err := cs.CoreV1().Namespaces().Delete(t.Context(), "queued", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, family := range families {
			series := family + `{name="namespace"}`
			waitForMetricAbove(t, s, admin, series, before[series])
		}
		body := scrape(t, s, admin)
		for _, family := range []string{"workqueue_depth", "workqueue_retries_total", "workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds"} {
			if !strings.Contains(body, "\n"+family+`{name="namespace"} `) {
				t.Errorf("/metrics lacks the namespace queue's %s", family)
			}
		}
	})
}

func checkAuthorizationAuditAndTLS(t *testing.T, s *Server, admin *rest.Config, cs kubernetes.Interface) {
	families := []string{"authorization_attempts_total", "authorization_duration_seconds_count"}
	before := metricValues(t, scrape(t, s, admin), families...)
	// no authorizer has an opinion of a user nobody granted anything, as
	// upstream labels a forbidden request
	if _, err := as(t, admin, "nobody").CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list pods as nobody: %v, want Forbidden", err)
	}
	after := metricValues(t, scrape(t, s, admin), families...)
	for _, series := range []string{`authorization_attempts_total{result="no-opinion"}`, `authorization_duration_seconds_count{result="no-opinion"}`} {
		if got := after[series] - before[series]; got != 1 {
			t.Errorf("%s rose by %v, want 1", series, got)
		}
	}
	if after[`authorization_attempts_total{result="allowed"}`] == 0 {
		t.Errorf("no allowed authorization counted: %v", after)
	}

	events := metricValue(t, s, admin, "apiserver_audit_event_total")
	if _, err := cs.CoreV1().PodTemplates("default").Get(t.Context(), "b", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := metricValue(t, s, admin, "apiserver_audit_event_total") - events; got != 2 {
		t.Errorf("apiserver_audit_event_total rose by %v, want 2 (RequestReceived, ResponseComplete)", got)
	}

	// net/http logs a TLS handshake error for a plain HTTP request, after
	// it has answered it: the count is waited for
	handshakes := metricValue(t, s, admin, "apiserver_tls_handshake_errors_total")
	resp, err := http.Get("http://" + strings.TrimPrefix(s.URL, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var rose float64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if rose = metricValue(t, s, admin, "apiserver_tls_handshake_errors_total") - handshakes; rose != 0 {
			break
		}
	}
	if rose != 1 {
		t.Errorf("apiserver_tls_handshake_errors_total rose by %v, want 1", rose)
	}
}

// checkClientCertificateLifetimes follows the admin's certificate: each
// scrape presents it too, so a request between two scrapes adds two
// observations of its remaining lifetime.
func checkClientCertificateLifetimes(t *testing.T, s *Server, admin *rest.Config, cs kubernetes.Interface) {
	block, _ := pem.Decode(s.AdminCertPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	count, sum := "apiserver_client_certificate_expiration_seconds_count", "apiserver_client_certificate_expiration_seconds_sum"
	body := scrape(t, s, admin)
	before := []float64{unlabelledValue(t, body, count), unlabelledValue(t, body, sum)}
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatal(err)
	}
	body = scrape(t, s, admin)
	after := []float64{unlabelledValue(t, body, count), unlabelledValue(t, body, sum)}
	if got := after[0] - before[0]; got != 2 {
		t.Errorf("%s rose by %v, want 2", count, got)
	}
	remaining := time.Until(cert.NotAfter).Seconds()
	if got := (after[1] - before[1]) / 2; got < remaining-60 || got > remaining+60 {
		t.Errorf("observed lifetimes average %.0fs, want the admin certificate's %.0fs", got, remaining)
	}
}

// checkClusterIPAllocations follows a Service given a free address of the
// default range and one asking for its own, then deleted.
func checkClusterIPAllocations(t *testing.T, s *Server, admin *rest.Config, cs kubernetes.Interface) {
	const cidr = `{cidr="10.0.0.0/24"}`
	families := []string{"kube_apiserver_clusterip_allocator_allocated_ips", "kube_apiserver_clusterip_allocator_available_ips",
		"kube_apiserver_clusterip_allocator_allocation_total", "kube_apiserver_clusterip_allocator_allocation_duration_seconds_count"}
	before := metricValues(t, scrape(t, s, admin), families...)
	// the static one first: a dynamic allocation may pick any free address
	for _, svc := range []struct{ name, ip string }{{"static", "10.0.0.200"}, {"dynamic", ""}} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svc.name},
			Spec: corev1.ServiceSpec{ClusterIP: svc.ip, Ports: []corev1.ServicePort{{Port: 80}}}}
		if _, err := cs.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	after := metricValues(t, scrape(t, s, admin), families...)
	for series, want := range map[string]float64{
		"kube_apiserver_clusterip_allocator_allocated_ips" + cidr: 2, "kube_apiserver_clusterip_allocator_available_ips" + cidr: -2,
		`kube_apiserver_clusterip_allocator_allocation_total{cidr="10.0.0.0/24",scope="dynamic"}`: 1,
		`kube_apiserver_clusterip_allocator_allocation_total{cidr="10.0.0.0/24",scope="static"}`:  1,
		"kube_apiserver_clusterip_allocator_allocation_duration_seconds_count" + cidr:             2,
	} {
		if got := after[series] - before[series]; got != want {
			t.Errorf("%s changed by %v, want %v", series, got, want)
		}
	}
	if got := after["kube_apiserver_clusterip_allocator_allocated_ips"+cidr] + after["kube_apiserver_clusterip_allocator_available_ips"+cidr]; got != 254 {
		t.Errorf("allocated and available addresses of a /24 add up to %v, want 254", got)
	}
	if err := cs.CoreV1().Services("default").Delete(t.Context(), "static", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForMetric(t, s, admin, "kube_apiserver_clusterip_allocator_allocated_ips"+cidr, after["kube_apiserver_clusterip_allocator_allocated_ips"+cidr]-1)
}

var unlabelled = regexp.MustCompile(`(?m)^([a-z_]+) (\S+)$`)

// metricValue is the value of a family without labels in a new scrape.
func metricValue(t *testing.T, s *Server, admin *rest.Config, name string) float64 {
	t.Helper()
	return unlabelledValue(t, scrape(t, s, admin), name)
}

// unlabelledValue is the value of a family without labels in body.
func unlabelledValue(t *testing.T, body, name string) float64 {
	t.Helper()
	for _, m := range unlabelled.FindAllStringSubmatch(body, -1) {
		if m[1] == name {
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("/metrics lacks %s", name)
	return 0
}

func createPodTemplate(t *testing.T, cs kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}}
	if _, err := cs.CoreV1().PodTemplates("default").Create(t.Context(), pt, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitForMetricAbove waits up to 10 seconds for series to exceed floor.
func waitForMetricAbove(t *testing.T, s *Server, admin *rest.Config, series string, floor float64) {
	t.Helper()
	name := series[:strings.IndexByte(series, '{')]
	var got float64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got = metricValues(t, scrape(t, s, admin), name)[series]
		if got > floor {
			return
		}
	}
	t.Fatalf("%s = %v, want above %v", series, got, floor)
}
