package e2e

import (
	"github.com/admitd/admitd/test/e2e/harness"

	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/admitd/admitd/pkg/admission/trace"
)

// explainConfigs: a mutating webhook that labels pods, a validating
// webhook whose namespaceSelector leaves out namespace "mine", and a
// policy that denies pods labelled forbidden.
func explainConfigs(h *webhookServer) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: explain-mutate}
webhooks:
- name: label.explain.admitd.io
  clientConfig: {url: "` + h.url + `/mutate", caBundle: "` + h.caBundle + `"}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: explain-other-teams}
webhooks:
- name: other.explain.admitd.io
  clientConfig: {url: "` + h.url + `/validate", caBundle: "` + h.caBundle + `"}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  namespaceSelector: {matchLabels: {team: other}}
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-forbidden-pods}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
  - expression: "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)"
    message: pods labelled forbidden are not allowed
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-forbidden-pods}
spec:
  policyName: no-forbidden-pods
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: only-never}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  matchConditions:
  - {name: named-never, expression: "object.metadata.name == 'never'"}
  validations:
  - expression: "false"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: only-never}
spec:
  policyName: only-never
  validationActions: [Deny]
`
}

const explainPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers: [{name: nginx, image: nginx}]
`

var auditIDLine = regexp.MustCompile(`audit ID (\S+) at `)

// TestExplainThroughWebhooksAndPolicy: admitd explain shows the mutating
// webhook's patch, the validating webhook skipped by its namespaceSelector
// with the labels compared, and the policy; the trace endpoint returns the
// same trace by audit ID to an admin but not to alice (403) until a
// ClusterRole grants it; kubectl admission explain works from PATH.
func TestExplainThroughWebhooksAndPolicy(t *testing.T) {
	t.Parallel()
	hooks := startWebhookServer(t, func(path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		if path == "/validate" {
			t.Errorf("the validating webhook was called for namespace %q; its namespaceSelector leaves it out", req.Namespace)
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt, Warnings: []string{"labelled by the explain webhook"},
			Patch: []byte(`[{"op":"add","path":"/metadata/labels/injected","value":"yes"},{"op":"replace","path":"/metadata/labels/app","value":"web-v2"}]`)}
	})
	a, alice := startWithAlice(t)
	a.MustKubectl(t, explainConfigs(hooks), "apply", "-f", "-")
	dir := t.TempDir()
	podFile := filepath.Join(dir, "pod.yaml")
	writeFile(t, podFile, explainPod)

	out, errOut, err := runAdmitd(t, a.Kubeconfig, "explain", "-f", podFile, "-n", "mine", "--as", "alice")
	if err != nil {
		t.Fatalf("admitd explain: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	for _, want := range []string{
		"CREATE pods mine/web (dry run) by alice (impersonated by admitd-admin)",
		"decision: Allowed (201)",
		"label.explain.admitd.io (explain-mutate): mutated, ",
		`patch: [{"op":"add","path":"/metadata/labels/injected","value":"yes"},{"op":"replace","path":"/metadata/labels/app","value":"web-v2"}]`,
		`+ metadata.labels.injected: "yes"`,
		`~ metadata.labels.app: "web" -> "web-v2"`,
		"warning: labelled by the explain webhook",
		"other.explain.admitd.io (explain-other-teams): skipped (NamespaceSelector)",
		`why: namespaceSelector "team=other" does not select namespace "mine" (labels: kubernetes.io/metadata.name=mine)`,
		"no-forbidden-pods (no-forbidden-pods): admitted",
		"only-never (only-never): skipped (MatchCondition)",
		`why: matchCondition "named-never" is false`,
		// The compiled-in plugins: what each changed, and those a pod is
		// none of the concern of.
		"ServiceAccount: mutated, ",
		`+ spec.serviceAccountName: "default"`,
		"DefaultTolerationSeconds: mutated, ",
		`"key":"node.kubernetes.io/not-ready"`,
		"TaintNodesByCondition: skipped (Resource)",
		"NamespaceLifecycle: admitted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("admitd explain output lacks %q:\n%s", want, out)
		}
	}
	m := auditIDLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no audit ID in:\n%s", out)
	}
	var got trace.Trace
	raw := a.MustKubectl(t, "", "get", "--raw", trace.Path+"/"+m[1])
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("decoding the trace: %v\n%s", err, raw)
	}
	checkExplainTrace(t, &got, m[1])

	// a denial: the policy's message, exit status 1
	writeFile(t, podFile, strings.Replace(explainPod, "app: web", "forbidden: \"yes\"", 1))
	out, _, err = runAdmitd(t, a.Kubeconfig, "explain", "-f", podFile, "-n", "mine", "-o", "json")
	var denied trace.Trace
	if jerr := json.Unmarshal([]byte(out), &denied); err == nil || jerr != nil || denied.Decision != trace.Denied ||
		denied.RejectedBy != "ValidatingAdmissionPolicy" || !strings.Contains(denied.Message, "pods labelled forbidden are not allowed") {
		t.Errorf("explaining a forbidden pod: err=%v, decode %v, trace %+v; want exit 1 and a denial by the policy", err, jerr, denied)
	}

	// alice may not read traces, until a ClusterRole grants it
	_, errOut, err = a.Kubectl(t, "", "--kubeconfig", alice, "get", "--raw", trace.Path+"/"+m[1])
	if err == nil || !strings.Contains(errOut, `forbidden: User "alice" cannot get path "/admission/traces/`+m[1]+`"`) {
		t.Errorf("alice reading a trace: err=%v stderr=%q, want 403", err, errOut)
	}
	a.MustKubectl(t, "", "create", "clusterrole", "trace-reader", "--verb=get", "--non-resource-url=/admission/traces", "--non-resource-url=/admission/traces/*")
	a.MustKubectl(t, "", "create", "clusterrolebinding", "alice-traces", "--clusterrole=trace-reader", "--user=alice")
	list := a.MustKubectl(t, "", "--kubeconfig", alice, "get", "--raw", trace.Path+"?user=alice&resource=pods&namespace=mine&decision=Allowed")
	var l trace.List
	if err := json.Unmarshal([]byte(list), &l); err != nil || len(l.Items) != 1 || l.Items[0].Request.AuditID != m[1] {
		t.Errorf("alice listing her allowed pod traces: %v, %s; want the one explained", err, list)
	}

	explainUpdateAndDelete(t, a, dir)

	out, errOut, err = runKubectlPlugin(t, a, "admission", "explain", "-f", podFile, "-n", "mine")
	if err == nil || !strings.Contains(out, "decision: Denied (422) by ValidatingAdmissionPolicy") {
		t.Errorf("kubectl admission explain: err=%v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
}

func checkExplainTrace(t *testing.T, got *trace.Trace, id string) {
	t.Helper()
	if got.APIVersion != trace.APIVersion || got.Kind != trace.Kind || got.Request.AuditID != id || got.Request.User != "alice" ||
		!got.Request.DryRun || got.Request.Operation != "CREATE" || got.Decision != trace.Allowed || !got.Verbose {
		t.Errorf("trace header = %s %s %+v %s verbose=%v", got.APIVersion, got.Kind, got.Request, got.Decision, got.Verbose)
	}
	steps := map[string]trace.Step{}
	for _, s := range got.Steps {
		if _, seen := steps[s.Name]; s.Name != "" && !seen {
			steps[s.Name] = s // the first pass's
		}
	}
	mut := steps["label.explain.admitd.io"]
	if mut.Outcome != trace.OutcomeMutated || mut.ReviewVersion != "admission.k8s.io/v1" || mut.FailurePolicy != "Fail" ||
		len(mut.FieldDiff) != 2 || mut.FieldDiff[0].Field != "metadata.labels.injected" || string(mut.FieldDiff[1].Old) != `"web"` {
		t.Errorf("mutating webhook step = %+v", mut)
	}
	skip := steps["other.explain.admitd.io"]
	if skip.Outcome != trace.OutcomeSkipped || skip.SkipReason != "NamespaceSelector" || skip.Matched {
		t.Errorf("skipped webhook step = %+v", skip)
	}
	if p := steps["no-forbidden-pods"]; p.Outcome != trace.OutcomeAdmitted || p.Phase != "validating" {
		t.Errorf("policy step = %+v", p)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runAdmitd runs the admitd binary with KUBECONFIG set.
func runAdmitd(t *testing.T, kubeconfig string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), harness.Bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

var pluginBin struct {
	once sync.Once
	dir  string
	err  error
}

// runKubectlPlugin runs kubectl with kubectl-admission (built once) first
// on PATH and KUBECONFIG set to the admin's.
func runKubectlPlugin(t *testing.T, a *admitd, args ...string) (string, string, error) {
	t.Helper()
	pluginBin.once.Do(func() {
		pluginBin.dir = filepath.Dir(harness.Bin)
		build := exec.Command("go", "build", "-o", filepath.Join(pluginBin.dir, "kubectl-admission"), "../../cmd/kubectl-admission")
		if out, err := build.CombinedOutput(); err != nil {
			pluginBin.err = err
			t.Logf("building kubectl-admission: %s", out)
		}
	})
	if pluginBin.err != nil {
		t.Fatalf("building kubectl-admission: %v", pluginBin.err)
	}
	cmd := exec.CommandContext(t.Context(), kubectlBinary(t), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+a.Kubeconfig, "HOME="+t.TempDir(), "PATH="+pluginBin.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// explainUpdateAndDelete explains an UPDATE (of the stored object, whose
// resourceVersion explain fills in) and a DELETE of a ConfigMap.
func explainUpdateAndDelete(t *testing.T, a *admitd, dir string) {
	t.Helper()
	cm := filepath.Join(dir, "cm.yaml")
	writeFile(t, cm, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1, namespace: mine}\ndata: {a: b}\n")
	a.MustKubectl(t, "", "create", "-f", cm)
	for op, want := range map[string]string{"UPDATE": "UPDATE configmaps mine/c1 (dry run)", "DELETE": "DELETE configmaps mine/c1 (dry run)"} {
		out, errOut, err := runAdmitd(t, a.Kubeconfig, "explain", "-f", cm, "--operation", op)
		if err != nil || !strings.Contains(out, want) || !strings.Contains(out, "decision: Allowed (200)") {
			t.Errorf("explain --operation %s: %v\n%s%s\nwant %q, Allowed (200)", op, err, out, errOut, want)
		}
	}
	if got := a.MustKubectl(t, "", "get", "configmap", "c1", "-n", "mine", "-o", "jsonpath={.data.a}"); got != "b" {
		t.Errorf("after dry runs, configmap data a = %q, want b (unchanged)", got)
	}
}
