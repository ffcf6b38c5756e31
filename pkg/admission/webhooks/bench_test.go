package webhooks_test

// Benchmarks measuring the same op as the benchmarks of upstream's own
// chain (k8s.io/apiserver v0.37.2's webhook plugins behind
// admission.WithAudit with the metrics decorators), so that the figures
// compare: one ConfigMap CREATE per op through the
// mutating and the validating phase of a chain of both webhook plugins
// (fresh attributes per phase, one record per request, metrics on), against
// an in-process "lean" HTTPS webhook on 127.0.0.1 (HTTP/2, keep-alive).

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/admitd/admitd/pkg/admission"
	admissiontrace "github.com/admitd/admitd/pkg/admission/trace"
	"github.com/admitd/admitd/pkg/admission/webhooks"
)

const benchLabel = "bench-mutated"

var benchPatch = base64.StdEncoding.EncodeToString([]byte(`[{"op":"add","path":"/metadata/labels/` + benchLabel + `","value":"true"}]`))

// leanWebhook answers with the fewest possible steps, as upstream's
// benchmark server: the uid is cut out of the body, /mutate adds
// benchLabel unless present, everything else allows.
type leanWebhook struct {
	*httptest.Server
	mutate, validate, never, h2, conns atomic.Int64
	mu                                 sync.Mutex
	last                               []byte
}

var leanBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (l *leanWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	buf := leanBufs.Get().(*bytes.Buffer)
	defer leanBufs.Put(buf)
	buf.Reset()
	_, _ = buf.ReadFrom(r.Body)
	body := buf.Bytes()
	if r.ProtoMajor == 2 {
		l.h2.Add(1)
	}
	patch := false
	switch r.URL.Path {
	case "/mutate":
		l.mutate.Add(1)
		patch = !bytes.Contains(body, []byte(`"`+benchLabel+`":"true"`))
	case "/validate":
		if l.validate.Add(1) == 1 {
			l.mu.Lock()
			l.last = append([]byte(nil), body...)
			l.mu.Unlock()
		}
	case "/never":
		l.never.Add(1)
	}
	var uid []byte
	if i := bytes.Index(body, []byte(`"uid":"`)); i >= 0 {
		rest := body[i+7:]
		if j := bytes.IndexByte(rest, '"'); j >= 0 {
			uid = rest[:j]
		}
	}
	out := make([]byte, 0, 256)
	out = append(out, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"`...)
	out = append(out, uid...)
	out = append(out, `","allowed":true`...)
	if patch {
		out = append(out, `,"patchType":"JSONPatch","patch":"`...)
		out = append(out, benchPatch...)
		out = append(out, '"')
	}
	out = append(out, "}}\n"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

var (
	leanOnce sync.Once
	lean     *leanWebhook
)

func getLean() *leanWebhook {
	leanOnce.Do(func() {
		ca, _ := cas()
		lean = &leanWebhook{}
		lean.Server = httptest.NewUnstartedServer(lean)
		lean.EnableHTTP2 = true
		// the positive controls send 2,000 calls at once: keep them on one
		// connection rather than opening hundreds past the default 250 streams
		lean.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 4096}
		lean.TLS = &tls.Config{Certificates: []tls.Certificate{ca.cert}, MinVersion: tls.VersionTLS12}
		lean.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				lean.conns.Add(1)
			}
		}
		lean.StartTLS()
	})
	return lean
}

const benchNS = "ns1"

func benchConfigMap(ns string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm1", Namespace: ns, Labels: map[string]string{"app": "web", "tier": "backend"}},
		Data: map[string]string{
			"LOG_LEVEL":   "info",
			"FEATURE_X":   "enabled",
			"config.yaml": "server:\n  port: 8080\n  readTimeout: 30s\n  writeTimeout: 30s\ndatabase:\n  host: db.internal\n  pool: 20\ncache:\n  ttl: 5m\n",
		},
	}
}

var benchUser = authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters", "system:authenticated"}}

// benchHook is a webhook as the API defaults it (Equivalent, Fail, 10 s,
// selectors {}), for CREATE of core/v1 resource.
func benchHook(name, url, resource string, nsSelector *metav1.LabelSelector) admissionregistrationv1.ValidatingWebhook {
	ca, _ := cas()
	if nsSelector == nil {
		nsSelector = &metav1.LabelSelector{}
	}
	return admissionregistrationv1.ValidatingWebhook{
		Name:         name,
		ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca.pem},
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{resource}},
		}},
		FailurePolicy: fail, MatchPolicy: ptr(admissionregistrationv1.Equivalent),
		NamespaceSelector: nsSelector, ObjectSelector: &metav1.LabelSelector{},
		SideEffects: ptr(admissionregistrationv1.SideEffectClassNone), TimeoutSeconds: ptr(int32(10)),
		AdmissionReviewVersions: []string{"v1"},
	}
}

func asMutating(c *admissionregistrationv1.ValidatingWebhookConfiguration) *admissionregistrationv1.MutatingWebhookConfiguration {
	m := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: c.ObjectMeta}
	for _, w := range c.Webhooks {
		m.Webhooks = append(m.Webhooks, admissionregistrationv1.MutatingWebhook{
			Name: w.Name, ClientConfig: w.ClientConfig, Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
			NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector, SideEffects: w.SideEffects,
			TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions,
			ReinvocationPolicy: ptr(admissionregistrationv1.NeverReinvocationPolicy),
		})
	}
	return m
}

// benchChain is a chain of both webhook plugins over configurations.
type benchChain struct {
	chain *admission.Chain
	ns    *namespaces
	last  runtime.Object
}

func newBenchChain(b testing.TB, m []*admissionregistrationv1.MutatingWebhookConfiguration, v []*admissionregistrationv1.ValidatingWebhookConfiguration) *benchChain {
	b.Helper()
	reg := prometheus.NewRegistry()
	metrics := admission.NewMetrics(reg)
	src := webhooks.StaticSource{Snapshot: webhooks.NewSnapshot(m, v)}
	r := admission.NewRegistry()
	webhooks.Register(r, webhooks.Options{Source: src, CEL: sharedCEL(), Metrics: metrics, Logger: discardLogger()})
	ns := newNamespaces(namespace(benchNS, nil), namespace("other", map[string]string{"team": "other"}))
	chain, err := r.NewChain([]string{webhooks.MutatingName, webhooks.ValidatingName}, admission.PluginContext{Namespaces: ns, Schema: testSchema{}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return &benchChain{chain: chain.WithMetrics(metrics), ns: ns}
}

// create admits a CREATE of obj as the API server does: one record, fresh
// attributes for each phase. Mutating plugins replace the object (they do
// not patch obj in place); the admitted object is left in c.last.
func (c *benchChain) create(ctx context.Context, obj *corev1.ConfigMap) error {
	rec := admission.NewRecord()
	opts := &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}}
	a := &admission.Attributes{Name: obj.Name, Namespace: obj.Namespace, Resource: cmGVR, Kind: cmGVK, Operation: admission.Create,
		Options: opts, Object: obj, UserInfo: benchUser, Record: rec}
	if err := c.chain.Admit(ctx, a); err != nil {
		return err
	}
	v := &admission.Attributes{Name: obj.Name, Namespace: obj.Namespace, Resource: cmGVR, Kind: cmGVK, Operation: admission.Create,
		Options: opts, Object: a.Object, UserInfo: benchUser, Record: rec}
	c.last = a.Object
	err := c.chain.Validate(ctx, v)
	// as the server does when the request ends: keep its trace
	benchTraces.Add(admissiontrace.Capture(admissiontrace.Request{Verb: "create", Resource: "configmaps", Namespace: obj.Namespace, Name: obj.Name},
		admissiontrace.Outcome{Code: 201}, rec))
	return err
}

// benchTraces is the ring the benchmarks keep traces in, as a server's.
var benchTraces = admissiontrace.NewRing(admissiontrace.DefaultRingSize)

// run is the timed loop: warm up, then one CREATE per op on a fresh copy
// of tmpl, each admitted; reports cpu-ns/op (this process's user+system
// CPU over the timed loop / b.N, all threads, webhook server included).
func (c *benchChain) run(b *testing.B, tmpl *corev1.ConfigMap) {
	b.Helper()
	ctx := context.Background()
	for i := 0; i < 50; i++ {
		if err := c.create(ctx, tmpl.DeepCopy()); err != nil {
			b.Fatalf("warm-up: %v", err)
		}
	}
	b.ReportAllocs()
	cpu := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.create(ctx, tmpl.DeepCopy()); err != nil {
			b.Fatalf("op %d: %v", i, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func BenchmarkDispatch_NoWebhooks(b *testing.B) {
	c := newBenchChain(b, nil, nil)
	c.run(b, benchConfigMap(benchNS))
	if n := c.ns.reads.Load(); n != 0 {
		b.Fatalf("%d namespace reads without any webhook", n)
	}
}

func BenchmarkDispatch_1Mutating1Validating(b *testing.B) {
	l := getLean()
	c := newBenchChain(b,
		[]*admissionregistrationv1.MutatingWebhookConfiguration{asMutating(&admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "mwc"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{benchHook("m.bench.example.com", l.URL+"/mutate", "configmaps", nil)}})},
		[]*admissionregistrationv1.ValidatingWebhookConfiguration{{
			ObjectMeta: metav1.ObjectMeta{Name: "vwc"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{benchHook("v.bench.example.com", l.URL+"/validate", "configmaps", nil)}}})
	tmpl := benchConfigMap(benchNS)
	obj := tmpl.DeepCopy()
	m0, v0, h0 := l.mutate.Load(), l.validate.Load(), l.h2.Load()
	if err := c.create(context.Background(), obj); err != nil {
		b.Fatal(err)
	}
	if got := c.last.(*corev1.ConfigMap).Labels; got[benchLabel] != "true" {
		b.Fatalf("label %s not applied: %v", benchLabel, got)
	}
	if l.mutate.Load()-m0 != 1 || l.validate.Load()-v0 != 1 || l.h2.Load()-h0 != 2 {
		b.Fatalf("expected one HTTP/2 call to each webhook")
	}
	conns := l.conns.Load()
	c.run(b, tmpl)
	if got := l.conns.Load() - conns; got != 0 {
		b.Fatalf("connections were not kept alive: %d new during the run", got)
	}
	l.mu.Lock()
	b.ReportMetric(float64(len(l.last)), "review-bytes")
	l.mu.Unlock()
}

// BenchmarkBareHTTPSRoundTrip is the floor of one webhook call: one HTTP/2
// POST of the review the dispatcher sends (captured from the server) to the
// same server, with a client configured as the dispatcher's.
func BenchmarkBareHTTPSRoundTrip(b *testing.B) {
	l := getLean()
	l.mu.Lock()
	body := l.last
	l.mu.Unlock()
	if body == nil {
		// no dispatch ran yet in this process: take one review from it
		c := newBenchChain(b, nil, []*admissionregistrationv1.ValidatingWebhookConfiguration{{
			ObjectMeta: metav1.ObjectMeta{Name: "vwc"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{benchHook("v.bench.example.com", l.URL+"/validate", "configmaps", nil)}}})
		if err := c.create(context.Background(), benchConfigMap(benchNS)); err != nil {
			b.Fatal(err)
		}
		l.mu.Lock()
		body = l.last
		l.mu.Unlock()
	}
	ca, _ := cas()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	url := l.URL + "/validate?timeout=10s"
	post := func() {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
			b.Fatalf("reply %s %d", resp.Proto, resp.StatusCode)
		}
	}
	for i := 0; i < 100; i++ {
		post()
	}
	b.ReportAllocs()
	cpu := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		post()
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(len(body)), "review-bytes")
}

// matching benchmarks: n validating webhooks (one per configuration, as
// upstream's) that a ConfigMap CREATE in ns1 does not match, with a
// positive control showing that the same configurations are called when
// the request does match.
func benchMatching(b *testing.B, n int, variant string) {
	l := getLean()
	var cfgs []*admissionregistrationv1.ValidatingWebhookConfiguration
	for i := 0; i < n; i++ {
		var h admissionregistrationv1.ValidatingWebhook
		name := fmt.Sprintf("w%04d.bench.example.com", i)
		if variant == "rules" {
			h = benchHook(name, l.URL+"/never", "secrets", nil)
		} else {
			h = benchHook(name, l.URL+"/never", "configmaps", &metav1.LabelSelector{MatchLabels: map[string]string{"team": "other"}})
		}
		// The positive control's burst of 2,000 first calls opens a TLS
		// connection for most of them (net/http dials per waiting request
		// until HTTP/2 is up): allow it the longest timeout.
		h.TimeoutSeconds = ptr(int32(30))
		cfgs = append(cfgs, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("vwc-%04d", i)}, Webhooks: []admissionregistrationv1.ValidatingWebhook{h}})
	}
	c := newBenchChain(b, nil, cfgs)
	// positive control (once per process: it makes n HTTPS calls)
	if variant == "nsselector" && !controlled.Swap(true) {
		before, conns, start := l.never.Load(), l.conns.Load(), time.Now()
		if err := c.create(context.Background(), benchConfigMap("other")); err != nil {
			b.Fatalf("positive control, after %v and %d new connections: %v", time.Since(start), l.conns.Load()-conns, err)
		}
		b.Logf("positive control: %d parallel calls in %v, %d new connections", n, time.Since(start), l.conns.Load()-conns)
		if got := l.never.Load() - before; got != int64(n) {
			b.Fatalf("matching request made %d calls, want %d", got, n)
		}
	}
	before, reads := l.never.Load(), c.ns.reads.Load()
	c.run(b, benchConfigMap(benchNS))
	if l.never.Load() != before {
		b.Fatalf("non-matching requests called webhooks")
	}
	if variant == "nsselector" {
		if got, ops := c.ns.reads.Load()-reads, int64(b.N+50); got != ops {
			b.Fatalf("%d namespace reads for %d requests, want one each", got, ops)
		}
	}
}

var controlled atomic.Bool

func BenchmarkDispatch_2000WebhooksNoMatch(b *testing.B) { benchMatching(b, 2000, "rules") }

func BenchmarkDispatch_2000WebhooksNamespaceSelectorExcludes(b *testing.B) {
	benchMatching(b, 2000, "nsselector")
}
