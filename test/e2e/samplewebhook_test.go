package e2e

import (
	"github.com/admitd/admitd/test/e2e/harness"

	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/pki"
)

// sampleWebhook is a running `admitd webhook` process: upstream's e2e test
// webhook, on 127.0.0.1 with certificates from its own CA.
type sampleWebhook struct {
	url      string
	caBundle string
	stderr   *bytes.Buffer
}

// sampleServingLine is `admitd webhook`'s first line; without --bind-address
// it serves 127.0.0.1 only.
var sampleServingLine = regexp.MustCompile(`serving on https://127\.0\.0\.1:(\d+)$`)

const sampleSidecarImage = "registry.k8s.io/pause:3.10"

func startSampleWebhook(t *testing.T) *sampleWebhook {
	t.Helper()
	ca, err := pki.NewCA("e2e-server-cert-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueServing([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(harness.Bin, "webhook", "--tls-cert-file="+certFile, "--tls-private-key-file="+keyFile,
		"-v=4", "--port=0", "--sidecar-image="+sampleSidecarImage)
	w := &sampleWebhook{caBundle: base64.StdEncoding.EncodeToString(ca.CertPEM), stderr: &bytes.Buffer{}}
	cmd.Stderr = w.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("admitd webhook stderr:\n%s", w.stderr.String())
		}
	})
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	m := sampleServingLine.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		t.Fatalf("admitd webhook printed %q; stderr: %s", line, w.stderr.String())
	}
	w.url = "https://127.0.0.1:" + m[1]
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	resp, err := client.Get(w.url + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /readyz: %v %v", resp, err)
	}
	resp.Body.Close()
	return w
}

// sampleConfigs registers the sample webhook's endpoints as the upstream e2e
// does (names, paths, rules and failure policies of
// k8s.io/kubernetes/test/e2e/apimachinery/webhook.go), with URL
// client configs. Mutating configurations run in name order, so the sidecar
// webhook runs before the init-container one, and is reinvoked after it.
func sampleConfigs(w *sampleWebhook) string {
	cc := func(path string) string {
		return `{url: "` + w.url + path + `", caBundle: "` + w.caBundle + `"}`
	}
	ns := `namespaceSelector: {matchLabels: {sample-webhook-e2e: "true"}}`
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: sample-webhook-validating}
webhooks:
- name: deny-unwanted-pod-container-name-and-label.k8s.io
  clientConfig: ` + cc("/pods") + `
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  timeoutSeconds: 3
  ` + ns + `
  sideEffects: None
  admissionReviewVersions: [v1, v1beta1]
- name: deny-unwanted-configmap-data.k8s.io
  clientConfig: ` + cc("/configmaps") + `
  rules: [{operations: [CREATE, UPDATE, DELETE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  failurePolicy: Fail
  namespaceSelector:
    matchLabels: {sample-webhook-e2e: "true"}
    matchExpressions: [{key: skip-webhook-admission, operator: NotIn, values: ["yes"]}]
  sideEffects: None
  admissionReviewVersions: [v1beta1]
- name: deny-attaching-pod.k8s.io
  clientConfig: ` + cc("/pods/attach") + `
  rules: [{operations: [CONNECT], apiGroups: [""], apiVersions: [v1], resources: [pods/attach]}]
  failurePolicy: Fail
  ` + ns + `
  sideEffects: None
  admissionReviewVersions: [v1, v1beta1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: sample-webhook-a-sidecar}
webhooks:
- name: adding-sidecar.k8s.io
  clientConfig: ` + cc("/mutating-pods-sidecar") + `
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  reinvocationPolicy: IfNeeded
  ` + ns + `
  sideEffects: None
  admissionReviewVersions: [v1, v1beta1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: sample-webhook-b-mutating}
webhooks:
- name: adding-init-container.k8s.io
  clientConfig: ` + cc("/mutating-pods") + `
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  failurePolicy: Fail
  ` + ns + `
  sideEffects: None
  admissionReviewVersions: [v1, v1beta1]
- name: adding-configmap-data-stage-1.k8s.io
  clientConfig: ` + cc("/mutating-configmaps") + `
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  failurePolicy: Fail
  ` + ns + `
  sideEffects: None
  admissionReviewVersions: [v1, v1beta1]
- name: adding-configmap-data-stage-2.k8s.io
  clientConfig: ` + cc("/mutating-configmaps") + `
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  failurePolicy: Fail
  ` + ns + `
  sideEffects: None
  admissionReviewVersions: [v1beta1]
`
}

func sampleConfigMap(name, ns, key, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {%q: %q}\n", name, ns, key, value)
}

func samplePod(name string, labels map[string]string, containers ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: sample-e2e\n  labels: {", name)
	for k, v := range labels {
		fmt.Fprintf(&b, "%q: %q,", k, v)
	}
	b.WriteString("}\nspec:\n  containers:\n")
	for _, c := range containers {
		fmt.Fprintf(&b, "  - {name: %s, image: %s}\n", c, sampleSidecarImage)
	}
	return b.String()
}

// wantDenied runs kubectl and checks that it fails with every text in want.
func wantDenied(t *testing.T, a *admitd, stdin string, want []string, args ...string) {
	t.Helper()
	_, errOut, err := a.Kubectl(t, stdin, args...)
	if err == nil {
		t.Errorf("kubectl %s succeeded, want it denied with %q", strings.Join(args, " "), want)
		return
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			t.Errorf("kubectl %s: stderr %q does not contain %q", strings.Join(args, " "), errOut, w)
		}
	}
}

// sampleCalls returns how many times admitd called the webhook name.
func sampleCalls(t *testing.T, a *admitd, name string) int {
	t.Helper()
	re := regexp.MustCompile(`apiserver_admission_webhook_admission_duration_seconds_count\{name="` + regexp.QuoteMeta(name) + `"[^}]*\} (\d+)`)
	total := 0
	for _, m := range re.FindAllStringSubmatch(a.Metrics(t), -1) {
		n, _ := strconv.Atoi(m[1])
		total += n
	}
	return total
}

func TestSampleWebhook(t *testing.T) {
	t.Parallel()
	hook := startSampleWebhook(t)
	a := startAdmitd(t, filepath.Join(t.TempDir(), "data"))
	a.MustKubectl(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: sample-e2e, labels: {sample-webhook-e2e: \"true\"}}\n"+
		"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: sample-e2e-skip, labels: {sample-webhook-e2e: \"true\", skip-webhook-admission: \"yes\"}}\n",
		"apply", "-f", "-")
	a.MustKubectl(t, sampleConfigs(hook), "apply", "-f", "-")

	t.Run("pods", func(t *testing.T) { sampleWebhookPods(t, a) })
	t.Run("configmaps", func(t *testing.T) { sampleWebhookConfigMaps(t, a) })
	t.Run("attach", func(t *testing.T) { sampleWebhookAttach(t, a) })
	t.Run("custom resources", func(t *testing.T) { sampleWebhookCustomResources(t, a, hook) })
}

// sampleWebhookPods: denied pods with upstream's messages, a hanging webhook
// that times out, and pods mutated by two webhooks, the first reinvoked
// after the second without injecting its sidecar twice.
func sampleWebhookPods(t *testing.T, a *admitd) {
	wantDenied(t, a, samplePod("disallowed-pod", map[string]string{"webhook-e2e-test": "webhook-disallow"}, "webhook-disallow"),
		[]string{`Error from server: error when creating "STDIN": admission webhook "deny-unwanted-pod-container-name-and-label.k8s.io" ` +
			`denied the request: the pod contains unwanted label; the pod contains unwanted container name;`}, "create", "-f", "-")

	start := time.Now()
	wantDenied(t, a, samplePod("hanging-pod", map[string]string{"webhook-e2e-test": "wait-forever"}, "wait-forever"),
		[]string{"webhook", "deadline", "/pods?timeout=3s"}, "create", "-f", "-")
	if took := time.Since(start); took < 3*time.Second || took > 8*time.Second {
		t.Errorf("hanging webhook answered after %v, want the 3s timeout", took)
	}
	if _, errOut, err := a.Kubectl(t, "", "get", "pod", "hanging-pod", "-n", "sample-e2e"); err == nil || !strings.Contains(errOut, "NotFound") {
		t.Errorf("get hanging-pod: %v %s, want NotFound", err, errOut)
	}

	before := sampleCalls(t, a, "adding-sidecar.k8s.io")
	a.MustKubectl(t, samplePod("webhook-to-be-mutated", nil, "example"), "create", "-f", "-")
	got := a.MustKubectl(t, "", "get", "pod", "webhook-to-be-mutated", "-n", "sample-e2e", "-o",
		"jsonpath={.spec.initContainers[*].name}/{.spec.initContainers[0].terminationMessagePolicy}/{.spec.containers[*].name}/{.spec.containers[1].image}")
	if want := "webhook-added-init-container/File/example webhook-added-sidecar/" + sampleSidecarImage; got != want {
		t.Errorf("mutated pod = %q, want %q (one init container, defaulted; one sidecar)", got, want)
	}
	if calls := sampleCalls(t, a, "adding-sidecar.k8s.io") - before; calls != 2 {
		t.Errorf("sidecar webhook called %d times for one pod, want 2 (reinvoked after the init container was added)", calls)
	}

	a.MustKubectl(t, samplePod("plain-pod", map[string]string{"app": "plain"}, "app"), "create", "-f", "-")
	got = a.MustKubectl(t, "", "get", "pod", "plain-pod", "-n", "sample-e2e", "-o", "jsonpath={.spec.initContainers}/{.spec.containers[*].name}")
	if want := "/app webhook-added-sidecar"; got != want {
		t.Errorf("plain pod = %q, want %q (sidecar only)", got, want)
	}
}

// sampleWebhookConfigMaps: configmaps denied on create, update, patch and
// delete with the reason upstream sends, allowed where the webhook is
// skipped, and mutated by two webhooks in a row.
func sampleWebhookConfigMaps(t *testing.T, a *admitd) {
	const ns = "sample-e2e"
	unwanted := []string{"Error from server (the configmap contains unwanted key and value): ",
		`admission webhook "deny-unwanted-configmap-data.k8s.io" denied the request: the configmap contains unwanted key and value`}
	wantDenied(t, a, sampleConfigMap("disallowed-configmap", ns, "webhook-e2e-test", "webhook-disallow"), unwanted, "create", "-f", "-")
	a.MustKubectl(t, sampleConfigMap("allowed-configmap", ns, "admit", "this"), "create", "-f", "-")
	wantDenied(t, a, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: allowed-configmap, namespace: sample-e2e}\n"+
		"data: {admit: this, webhook-e2e-test: webhook-disallow}\n", unwanted, "replace", "-f", "-")
	wantDenied(t, a, "", unwanted, "patch", "configmap", "allowed-configmap", "-n", ns, "--type=strategic",
		"-p", `{"data":{"webhook-e2e-test":"webhook-disallow"}}`)
	a.MustKubectl(t, sampleConfigMap("disallowed-configmap", "sample-e2e-skip", "webhook-e2e-test", "webhook-disallow"), "create", "-f", "-")

	a.MustKubectl(t, sampleConfigMap("nondeletable", ns, "webhook-e2e-test", "webhook-nondeletable"), "create", "-f", "-")
	wantDenied(t, a, "", []string{`admission webhook "deny-unwanted-configmap-data.k8s.io" denied the request: ` +
		`the configmap cannot be deleted because it contains unwanted key and value`}, "delete", "configmap", "nondeletable", "-n", ns)
	a.MustKubectl(t, "", "patch", "configmap", "nondeletable", "-n", ns, "--type=merge", "-p", `{"data":{"webhook-e2e-test":"webhook-allow"}}`)
	a.MustKubectl(t, "", "delete", "configmap", "nondeletable", "-n", ns)

	a.MustKubectl(t, sampleConfigMap("to-be-mutated", ns, "mutation-start", "yes"), "create", "-f", "-")
	got := a.MustKubectl(t, "", "get", "configmap", "to-be-mutated", "-n", ns, "-o", "go-template={{range $k, $v := .data}}{{$k}}={{$v}} {{end}}")
	if want := "mutation-stage-1=yes mutation-stage-2=yes mutation-start=yes "; got != want {
		t.Errorf("mutated configmap data = %q, want %q", got, want)
	}
}

// sampleWebhookAttach: `kubectl attach -i -c container1` is denied.
func sampleWebhookAttach(t *testing.T, a *admitd) {
	a.MustKubectl(t, samplePod("to-be-attached-pod", nil, "container1"), "create", "-f", "-")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := a.KubectlCmd(ctx, t, "attach", "--namespace=sample-e2e", "to-be-attached-pod", "-i", "-c=container1")
	out, err := cmd.CombinedOutput()
	if want := "attaching to pod 'to-be-attached-pod' is not allowed"; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("kubectl attach: %v\n%s\nwant a failure containing %q", err, out, want)
	}
}

const sampleCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: samplecrs.webhook.example.com}
spec:
  group: webhook.example.com
  scope: Namespaced
  names: {plural: samplecrs, singular: samplecr, kind: SampleCR, listKind: SampleCRList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          data: {type: object, additionalProperties: {type: string}}
`

func sampleCR(name, data string) string {
	return "apiVersion: webhook.example.com/v1\nkind: SampleCR\nmetadata: {name: " + name + ", namespace: sample-e2e}\ndata: " + data + "\n"
}

// sampleWebhookCustomResources: custom resources denied on create, update
// and delete and mutated in two stages; a labelled CRD denied.
func sampleWebhookCustomResources(t *testing.T, a *admitd, w *sampleWebhook) {
	cc := func(path string) string {
		return `{url: "` + w.url + path + `", caBundle: "` + w.caBundle + `"}`
	}
	rules := `rules: [{operations: [OPS], apiGroups: [webhook.example.com], apiVersions: [v1], resources: [samplecrs]}]`
	a.MustKubectl(t, sampleCRD, "apply", "-f", "-")
	a.MustKubectl(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: sample-webhook-custom-resources}
webhooks:
- name: deny-unwanted-custom-resource-data.k8s.io
  clientConfig: `+cc("/custom-resource")+`
  `+strings.Replace(rules, "OPS", "CREATE, UPDATE, DELETE", 1)+`
  namespaceSelector: {matchLabels: {sample-webhook-e2e: "true"}}
  sideEffects: None
  admissionReviewVersions: [v1, v1beta1]
- name: deny-crd-with-unwanted-label.k8s.io
  clientConfig: `+cc("/crd")+`
  rules: [{operations: [CREATE], apiGroups: [apiextensions.k8s.io], apiVersions: ["*"], resources: [customresourcedefinitions]}]
  objectSelector: {matchLabels: {sample-webhook-e2e: "true"}}
  sideEffects: None
  admissionReviewVersions: [v1, v1beta1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: sample-webhook-custom-resources}
webhooks:
- name: mutate-custom-resource-data-stage-1.k8s.io
  clientConfig: `+cc("/mutating-custom-resource")+`
  `+strings.Replace(rules, "OPS", "CREATE, UPDATE", 1)+`
  namespaceSelector: {matchLabels: {sample-webhook-e2e: "true"}}
  sideEffects: None
  admissionReviewVersions: [v1, v1beta1]
- name: mutate-custom-resource-data-stage-2.k8s.io
  clientConfig: `+cc("/mutating-custom-resource")+`
  `+strings.Replace(rules, "OPS", "CREATE", 1)+`
  namespaceSelector: {matchLabels: {sample-webhook-e2e: "true"}}
  sideEffects: None
  admissionReviewVersions: [v1, v1beta1]
`, "apply", "-f", "-")

	unwanted := []string{`admission webhook "deny-unwanted-custom-resource-data.k8s.io" denied the request: the custom resource contains unwanted data`}
	wantDenied(t, a, sampleCR("cr-instance-1", "{webhook-e2e-test: webhook-disallow}"), unwanted, "create", "-f", "-")
	a.MustKubectl(t, sampleCR("cr-instance-2", "{webhook-e2e-test: webhook-nondeletable}"), "create", "-f", "-")
	wantDenied(t, a, "", unwanted, "patch", "samplecr", "cr-instance-2", "-n", "sample-e2e", "--type=merge", "-p", `{"data":{"webhook-e2e-test":"webhook-disallow"}}`)
	wantDenied(t, a, "", []string{`admission webhook "deny-unwanted-custom-resource-data.k8s.io" denied the request: ` +
		`the custom resource cannot be deleted because it contains unwanted key and value`}, "delete", "samplecr", "cr-instance-2", "-n", "sample-e2e")
	a.MustKubectl(t, "", "patch", "samplecr", "cr-instance-2", "-n", "sample-e2e", "--type=merge", "-p", `{"data":{"webhook-e2e-test":"webhook-allow"}}`)
	a.MustKubectl(t, "", "delete", "samplecr", "cr-instance-2", "-n", "sample-e2e")

	a.MustKubectl(t, sampleCR("cr-mutated", "{mutation-start: \"yes\"}"), "create", "-f", "-")
	got := a.MustKubectl(t, "", "get", "samplecr", "cr-mutated", "-n", "sample-e2e", "-o", "go-template={{range $k, $v := .data}}{{$k}}={{$v}} {{end}}")
	if want := "mutation-stage-1=yes mutation-stage-2=yes mutation-start=yes "; got != want {
		t.Errorf("mutated custom resource data = %q, want %q", got, want)
	}

	labelled := strings.Replace(strings.ReplaceAll(sampleCRD, "samplecr", "labelledcr"), "SampleCR", "LabelledCR", -1)
	labelled = strings.Replace(labelled, "metadata: {name: labelledcrs.webhook.example.com}",
		"metadata: {name: labelledcrs.webhook.example.com, labels: {sample-webhook-e2e: \"true\", webhook-e2e-test: webhook-disallow}}", 1)
	wantDenied(t, a, labelled, []string{`admission webhook "deny-crd-with-unwanted-label.k8s.io" denied the request: the crd contains unwanted label`}, "create", "-f", "-")
}
