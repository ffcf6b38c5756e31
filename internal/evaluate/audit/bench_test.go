package audit

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/evaluate"
)

// BenchmarkAudit audits generated objects (ConfigMaps, Pods, Deployments,
// Services in 20 namespaces, in files of 1,000) through 50
// ValidatingAdmissionPolicies (some with params, matchConditions, Deny,
// Warn or Audit) and 5 webhooks answered from recorded responses, and
// writes the text report. Besides time it reports objects/s and the peak
// heap in use, sampled every 20 ms; a process's peak RSS is
// /usr/bin/time -v of a run of one size:
//
//	go test -run '^$' -bench 'Audit/objects=100000/workers=2$' -benchtime 1x ./internal/evaluate/audit
//
// Nothing runs without -bench.
//
// Measured 2026-11-30 on the shared 2-core machine, one run each
// (-benchtime 1x; times are noisy, no benchstat across single runs):
//
//	                     before (c924b0b)            after, 2 workers
//	10,000 objects       51.4 s, 194.5 objects/s      24.3–25.9 s, 386–412 objects/s
//	  peak heap / RSS    292 MiB / 377 MB             118 MiB / 195 MB
//	100,000 objects      not run (~9 min)             238 s, 419.5 objects/s
//	  peak heap / RSS                                  386 MiB / 479 MB (before findings were shared)
//	allocated            0.92 MB per object            0.97 MB per object
//
// One worker after: 45.8 s at 10,000 (218.5 objects/s). Both cores are
// busy with 2 workers; the in-process server (managed fields, JSON) is
// most of the CPU. What still grows with the objects is the report: a
// reference per object and its findings.
//
// Each size runs with one worker, GOMAXPROCS (the default) and twice that.
func BenchmarkAudit(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	for _, n := range []int{1_000, 10_000, 100_000} {
		for _, workers := range []int{1, procs, 2 * procs} {
			b.Run(fmt.Sprintf("objects=%d/workers=%d", n, workers), func(b *testing.B) { benchmarkAudit(b, n, workers) })
		}
	}
}

func benchmarkAudit(b *testing.B, n, workers int) {
	dir := b.TempDir()
	if err := writeBenchObjects(dir, n); err != nil {
		b.Fatal(err)
	}
	config, responses := benchConfig(b)
	b.ReportAllocs()
	peak := startHeapSampler()
	start := time.Now()
	for b.Loop() {
		src, err := LoadFiles(dir)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Run(context.Background(), src, Options{Config: config, Responses: responses, Workers: workers})
		if err != nil {
			b.Fatal(err)
		}
		if r.Objects != n+benchNamespaces || len(r.NotEvaluated) > 0 {
			b.Fatalf("audited %d objects, %d not evaluated (%v); want %d", r.Objects, len(r.NotEvaluated), firstFindings(r.NotEvaluated), n+benchNamespaces)
		}
		if err := Write(io.Discard, r, "text"); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "objects/s")
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
}

func firstFindings(fs []Finding) []Finding {
	if len(fs) > 3 {
		return fs[:3]
	}
	return fs
}

// startHeapSampler samples the heap in use until the returned function,
// which says the highest sample, is called.
func startHeapSampler() func() uint64 {
	var mu sync.Mutex
	var high uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			mu.Lock()
			high = max(high, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		return high
	}
}

const benchNamespaces = 20

// writeBenchObjects writes the namespaces and n objects, 1,000 a file, as
// multi-document YAML.
func writeBenchObjects(dir string, n int) error {
	var b strings.Builder
	for i := range benchNamespaces {
		env := []string{"prod", "dev", "staging"}[i%3]
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns-%d\n  labels: {env: %s, team: t%d}\n---\n", i, env, i%4)
	}
	if err := os.WriteFile(filepath.Join(dir, "00-namespaces.yaml"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	for first := 0; first < n; first += 1000 {
		if err := writeBenchFile(filepath.Join(dir, fmt.Sprintf("objects-%06d.yaml", first)), first, min(first+1000, n)); err != nil {
			return err
		}
	}
	return nil
}

func writeBenchFile(path string, from, to int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for i := from; i < to; i++ {
		fmt.Fprintf(w, "%s---\n", benchObject(i))
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// benchObject is the i-th object: kinds in turn, some labelled and some
// not, so that every policy finds some objects and passes others.
func benchObject(i int) string {
	ns := fmt.Sprintf("ns-%d", i%benchNamespaces)
	labels := fmt.Sprintf("app: app-%d", i%97)
	if i%5 != 0 {
		labels += fmt.Sprintf(", team: t%d", i%4)
	}
	if i%7 == 0 {
		labels += ", tier: frontend"
	}
	meta := fmt.Sprintf("metadata:\n  name: obj-%d\n  namespace: %s\n  uid: uid-%d\n  resourceVersion: \"%d\"\n  labels: {%s}\n  annotations: {owner: someone-%d, note: \"created by the benchmark\"}\n",
		i, ns, i, 1000+i, labels, i%13)
	image := "registry.example.com/app:1." + fmt.Sprint(i%10)
	if i%11 == 0 {
		image = "docker.io/library/nginx:latest"
	}
	limits := "\n      resources: {limits: {cpu: 500m, memory: 256Mi}, requests: {cpu: 100m, memory: 128Mi}}"
	if i%6 == 0 {
		limits = ""
	}
	containers := fmt.Sprintf("- name: app\n      image: %s\n      ports: [{containerPort: 8080}]%s\n    - name: sidecar\n      image: registry.example.com/proxy:2.1\n      resources: {limits: {cpu: 100m, memory: 64Mi}}", image, limits)
	switch i % 4 {
	case 0:
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\n%sdata:\n  config.yaml: |\n    key: value-%d\n    other: thing\n  mode: \"%d\"\n", meta, i, i%3)
	case 1:
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\n%sspec:\n  restartPolicy: Always\n  containers:\n    %s\nstatus:\n  phase: Running\n  podIP: 10.244.%d.%d\n  conditions: [{type: Ready, status: \"True\"}]\n  containerStatuses: [{name: app, ready: true, restartCount: %d, image: %s, imageID: \"\"}]\n",
			meta, containers, i/250%250, i%250, i%3, image)
	case 2:
		return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\n%sspec:\n  replicas: %d\n  selector: {matchLabels: {app: app-%d}}\n  template:\n    metadata: {labels: {app: app-%d}}\n    spec:\n      containers:\n      %s\nstatus:\n  replicas: %d\n  readyReplicas: %d\n  observedGeneration: 1\n  conditions: [{type: Available, status: \"True\", reason: MinimumReplicasAvailable}]\n",
			meta, 1+i%12, i%97, i%97, strings.ReplaceAll(containers, "\n    ", "\n      "), 1+i%12, 1+i%12)
	}
	svcType := "ClusterIP"
	if i%9 == 3 {
		svcType = "NodePort"
	}
	return fmt.Sprintf("apiVersion: v1\nkind: Service\n%sspec:\n  type: %s\n  selector: {app: app-%d}\n  ports: [{name: http, port: 80, targetPort: 8080}]\n", meta, svcType, i%97)
}

// benchConfig is 50 ValidatingAdmissionPolicies with their bindings,
// their params, and 5 webhooks with one recorded response each.
func benchConfig(b *testing.B) ([]evaluate.Object, evaluate.Responses) {
	var docs []string
	docs = append(docs, `apiVersion: v1
kind: Namespace
metadata: {name: policy-params}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: policy-params}
data: {registry: registry.example.com/, maxReplicas: "8", forbidden: "NodePort"}`)
	for i := range 50 {
		docs = append(docs, benchPolicy(i))
	}
	docs = append(docs, benchWebhooks)
	config, err := objectsOf(strings.Join(docs, "\n---\n"))
	if err != nil {
		b.Fatal(err)
	}
	responses, err := evaluate.ParseResponses([]byte(benchResponses))
	if err != nil {
		b.Fatal(err)
	}
	return config, responses
}

func objectsOf(docs string) ([]evaluate.Object, error) {
	dir, err := os.MkdirTemp("", "admitd-audit-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(docs), 0o644); err != nil {
		return nil, err
	}
	return evaluate.LoadObjects(path)
}

// benchRules are what the policies check, by resource: a CEL expression,
// whether it reads params, and its message.
var benchRules = []struct {
	group, resource, expression, message string
	params                               bool
}{
	{"", "configmaps", "has(object.metadata.labels) && 'team' in object.metadata.labels", "every ConfigMap needs a team label", false},
	{"", "configmaps", "!has(object.data) || object.data.all(k, size(object.data[k]) < 4096)", "ConfigMap values must be under 4 KiB", false},
	{"", "pods", "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits) && 'memory' in c.resources.limits)", "every container needs a memory limit", false},
	{"", "pods", "object.spec.containers.all(c, c.image.startsWith(params.data.registry))", "images must come from the registry", true},
	{"", "pods", "!object.spec.containers.exists(c, c.image.endsWith(':latest'))", "no :latest images", false},
	{"apps", "deployments", "object.spec.replicas <= int(params.data.maxReplicas)", "too many replicas", true},
	{"apps", "deployments", "object.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits))", "every container of a Deployment needs limits", false},
	{"apps", "deployments", "has(object.metadata.labels) && 'team' in object.metadata.labels && object.metadata.labels['team'].startsWith('t')", "Deployments need a team", false},
	{"", "services", "object.spec.type != params.data.forbidden", "no NodePort Services", true},
	{"", "services", "object.spec.ports.all(p, p.port < 1024 || has(p.name))", "high ports need names", false},
}

// benchPolicy is the i-th policy and its binding: every third one has a
// matchCondition, the actions go Deny, Warn, Audit, Deny+Audit, and half
// the bindings select namespaces.
func benchPolicy(i int) string {
	r := benchRules[i%len(benchRules)]
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: policy-%02d}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: ["%s"], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [%s]}
`, i, r.group, r.resource)
	if r.params {
		b.WriteString("  paramKind: {apiVersion: v1, kind: ConfigMap}\n")
	}
	if i%3 == 0 {
		fmt.Fprintf(&b, "  matchConditions:\n  - {name: not-exempt, expression: \"!has(object.metadata.labels) || !('exempt-%d' in object.metadata.labels)\"}\n", i)
	}
	fmt.Fprintf(&b, "  validations:\n  - expression: %q\n    message: %q\n", r.expression, fmt.Sprintf("%s (policy %d)", r.message, i))
	if i%4 == 2 {
		b.WriteString("  auditAnnotations:\n  - {key: checked, valueExpression: \"'policy-checked ' + object.metadata.name\"}\n")
	}
	actions := []string{"[Deny]", "[Warn]", "[Audit]", "[Deny, Audit]"}[i%4]
	fmt.Fprintf(&b, `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: binding-%02d}
spec:
  policyName: policy-%02d
  validationActions: %s
`, i, i, actions)
	if r.params {
		b.WriteString("  paramRef: {name: limits, namespace: policy-params, parameterNotFoundAction: Deny}\n")
	}
	if i%2 == 1 {
		b.WriteString("  matchResources: {namespaceSelector: {matchExpressions: [{key: env, operator: In, values: [prod, staging]}]}}\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// benchWebhooks are 5 webhooks, two mutating: their URLs are never called,
// the recorded responses answer.
const benchWebhooks = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: mutators}
webhooks:
- name: stamp.example.com
  clientConfig: {url: "https://stamp.invalid/"}
  rules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  sideEffects: None
  admissionReviewVersions: [v1]
  objectSelector: {matchLabels: {tier: frontend}}
- name: defaults.example.com
  clientConfig: {url: "https://defaults.invalid/"}
  rules: [{operations: [CREATE, UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]
  sideEffects: None
  admissionReviewVersions: [v1]
  reinvocationPolicy: Never
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: validators}
webhooks:
- name: deny-unowned.example.com
  clientConfig: {url: "https://deny.invalid/"}
  rules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  sideEffects: None
  admissionReviewVersions: [v1]
  objectSelector: {matchExpressions: [{key: team, operator: DoesNotExist}]}
- name: warn-services.example.com
  clientConfig: {url: "https://warn.invalid/"}
  rules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [services]}]
  sideEffects: None
  admissionReviewVersions: [v1]
- name: annotate.example.com
  clientConfig: {url: "https://annotate.invalid/"}
  rules: [{operations: [CREATE, UPDATE], apiGroups: ["", apps], apiVersions: [v1], resources: [pods, deployments]}]
  sideEffects: None
  admissionReviewVersions: [v1]
  namespaceSelector: {matchLabels: {env: prod}}`

const benchResponses = `apiVersion: eval.admitd.io/v1alpha1
kind: WebhookResponses
webhooks:
  stamp.example.com:
    allowed: true
    patch: [{op: add, path: /metadata/labels/stamped, value: "yes"}]
  mutators/defaults.example.com:
    allowed: true
    patch: [{op: add, path: /metadata/annotations/defaulted, value: "true"}]
  deny-unowned.example.com:
    allowed: false
    status: {code: 403, message: ConfigMaps need an owner team}
  warn-services.example.com:
    allowed: true
    warnings: [Services are being reviewed]
  annotate.example.com:
    allowed: true
    auditAnnotations: {reviewed: "yes"}`
