package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// replayAuditPolicy records every request at RequestResponse.
const replayAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: RequestResponse
`

// stricterPolicies are what the stricter candidate adds: users'
// ConfigMaps need an app label, and Deployments may not be created with
// a :latest image.
const stricterPolicies = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: require-app}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  matchConditions:
  - {name: users, expression: "object.metadata.name != 'kube-root-ca.crt'"}
  validations:
  - expression: "has(object.metadata.labels) && 'app' in object.metadata.labels"
    message: every ConfigMap needs an app label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: require-app}
spec:
  policyName: require-app
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-latest}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - expression: "object.spec.template.spec.containers.all(c, !c.image.endsWith(':latest'))"
    message: no :latest images
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-latest}
spec:
  policyName: no-latest
  validationActions: [Deny]
`

// replayStep is one kubectl command of the recorded traffic and the
// request it sends ("verb resource namespace/name").
type replayStep struct {
	request string
	stdin   string
	args    []string
}

func cmDoc(ns, name, labels string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + ns + ", labels: " + labels + "}\ndata: {k: v}\n"
}

// replaySteps are the recorded traffic: some requests denied by the
// recorded VAPs and webhook, some mutated, patches of three types, an
// update, a delete.
func replaySteps() []replayStep {
	deploy := func(name string, replicas, image string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name + ", namespace: lab}\nspec:\n  replicas: " + replicas +
			"\n  selector: {matchLabels: {app: " + name + "}}\n  template:\n    metadata: {labels: {app: " + name + "}}\n    spec: {containers: [{name: c, image: \"" + image + "\"}]}\n"
	}
	return []replayStep{
		{"create namespaces /shop", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {env: prod}}\n", []string{"create", "-f", "-"}},
		{"create namespaces /lab", "apiVersion: v1\nkind: Namespace\nmetadata: {name: lab, labels: {env: dev}}\n", []string{"create", "-f", "-"}},
		{"create configmaps shop/a", cmDoc("shop", "a", "{team: a, app: web}"), []string{"create", "-f", "-"}},
		{"create configmaps shop/b", cmDoc("shop", "b", "{app: web}"), []string{"create", "-f", "-"}}, // require-team denies
		{"create configmaps lab/c", cmDoc("lab", "c", "{}"), []string{"create", "-f", "-"}},           // owner mutates
		{"create configmaps lab/d", cmDoc("lab", "d", "{app: x}"), []string{"create", "-f", "-"}},
		{"patch configmaps lab/d", "", []string{"label", "-n", "lab", "configmap", "d", "tier=1"}},
		{"patch configmaps shop/a", "", []string{"patch", "-n", "shop", "configmap", "a", "--type=merge", "-p", `{"data":{"k":"v2"}}`}},
		{"patch configmaps shop/a", "", []string{"patch", "-n", "shop", "configmap", "a", "--type=json", "-p", `[{"op":"add","path":"/data/j","value":"x"}]`}},
		{"update configmaps lab/c", strings.Replace(cmDoc("lab", "c", "{owner: platform}"), "k: v", "k: w", 1), []string{"replace", "-f", "-"}},
		{"create secrets lab/s1", "apiVersion: v1\nkind: Secret\nmetadata: {name: s1, namespace: lab, labels: {bad: \"true\"}}\nstringData: {k: v}\n", []string{"create", "-f", "-"}},
		{"create secrets lab/s2", "apiVersion: v1\nkind: Secret\nmetadata: {name: s2, namespace: lab, labels: {stamp: \"true\"}}\nstringData: {k: v}\n", []string{"create", "-f", "-"}},
		{"create deployments lab/web", deploy("web", "1", "nginx:latest"), []string{"create", "-f", "-"}},
		{"create deployments lab/big", deploy("big", "10", "nginx:1.27"), []string{"create", "-f", "-"}}, // max-replicas denies
		{"patch configmaps lab/e", cmDoc("lab", "e", "{app: y}"), []string{"apply", "--server-side", "-f", "-"}},
		{"delete configmaps lab/d", "", []string{"delete", "-n", "lab", "configmap", "d", "--wait=false"}},
	}
}

// driveReplaySteps runs the steps on a and returns those that failed.
func driveReplaySteps(t *testing.T, a *admitd) []string {
	t.Helper()
	var failed []string
	for _, s := range replaySteps() {
		if _, _, err := a.Kubectl(t, s.stdin, s.args...); err != nil {
			failed = append(failed, s.request)
		}
	}
	return failed
}

// replayReport is the part of admitd replay -o json the test reads.
type replayReport struct {
	Requests    int                `json:"requests"`
	Replayed    int                `json:"replayed"`
	Followed    int                `json:"followedOnly"`
	Same        int                `json:"same"`
	NowDenied   []replayDifference `json:"nowDenied"`
	NowAllowed  []replayDifference `json:"nowAllowed"`
	Changed     []replayDifference `json:"changed"`
	Annotations []replayDifference `json:"annotations"`
	NotReplayed []json.RawMessage  `json:"notReplayed"`
}

type replayDifference struct {
	Request struct {
		Verb      string `json:"verb"`
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"request"`
	After struct {
		Message string `json:"message"`
	} `json:"after"`
}

func (d replayDifference) key() string {
	return d.Request.Verb + " " + d.Request.Resource + " " + d.Request.Namespace + "/" + d.Request.Name
}

func runReplay(t *testing.T, wantCode int, args ...string) replayReport {
	t.Helper()
	out, errOut, code := runOffline(t, append([]string{"replay", "-o", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("admitd replay %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, wantCode, out, errOut)
	}
	var r replayReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("admitd replay -o json: %v\n%s", err, out)
	}
	return r
}

// TestReplayReproducesTheRecordedDecisionsAndNamesWhatAStricterCandidateDenies
// records traffic through admitd serve's audit log (RequestResponse) with a
// configuration of VAPs, a MAP and a webhook; the replay through that same
// configuration reproduces every decision, and the replay through a
// stricter one names exactly the requests that, sent to a server with the
// stricter configuration, are refused and were not.
func TestReplayReproducesTheRecordedDecisionsAndNamesWhatAStricterCandidateDenies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hooks := startWebhookServer(t, secretsHook)
	config := filepath.Join(dir, "config")
	writeFile(t, filepath.Join(dir, "audit-policy.yaml"), replayAuditPolicy)
	if err := os.MkdirAll(config, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(config, "policies.yaml"), auditPolicies)
	writeFile(t, filepath.Join(config, "webhook.yaml"), auditWebhook(hooks))
	strict := filepath.Join(dir, "stricter.yaml")
	writeFile(t, strict, stricterPolicies)
	log := filepath.Join(dir, "audit.log")

	a := startAdmitd(t, filepath.Join(dir, "data"), "--audit-log-path", log, "--audit-policy-file", filepath.Join(dir, "audit-policy.yaml"))
	a.MustKubectl(t, "", "apply", "-f", config)
	// the server's own writes before (kube-root-ca.crt, its bootstrap) had
	// no configuration: followed, not compared
	since := time.Now().UTC().Format(time.RFC3339Nano)
	recordedFailed := driveReplaySteps(t, a)
	for _, want := range []string{"create configmaps shop/b", "create secrets lab/s1", "create deployments lab/big"} {
		if !slices.Contains(recordedFailed, want) {
			t.Fatalf("%s was not refused (failed: %v): the test's configuration is not what it meant", want, recordedFailed)
		}
	}
	a.Stop() // the log is complete

	same := runReplay(t, 0, "--audit-log", log, "-f", config, "--since-time", since)
	if n := len(same.NowDenied) + len(same.NowAllowed) + len(same.Changed) + len(same.Annotations); n != 0 || len(same.NotReplayed) != 0 {
		t.Errorf("the recorded configuration: %d differences, not replayed %s\n%+v", n, same.NotReplayed, same)
	}
	if same.Replayed < len(replaySteps()) || same.Same != same.Replayed || same.Followed == 0 {
		t.Errorf("replayed %d of %d requests (%d before --since-time followed), %d the same; want at least the %d steps, all the same, and the server's first writes followed",
			same.Replayed, same.Requests, same.Followed, same.Same, len(replaySteps()))
	}

	stricter := runReplay(t, 1, "--audit-log", log, "-f", config, "-f", strict, "--since-time", since)
	var named []string
	for _, d := range stricter.NowDenied {
		named = append(named, d.key())
	}
	slices.Sort(named)

	checkReplayCIFormats(t, len(stricter.NowDenied), "--audit-log", log, "-f", config, "-f", strict, "--since-time", since)

	b := startAdmitd(t, filepath.Join(dir, "data-stricter"))
	b.MustKubectl(t, "", "apply", "-f", config, "-f", strict)
	var nowRefused []string
	for _, s := range driveReplaySteps(t, b) {
		if !slices.Contains(recordedFailed, s) {
			nowRefused = append(nowRefused, s)
		}
	}
	slices.Sort(nowRefused)
	if !slices.Equal(named, nowRefused) {
		t.Errorf("the replay names as now denied\n  %v\nwith the stricter configuration applied, these requests were refused\n  %v", named, nowRefused)
	}
	if len(nowRefused) < 3 {
		t.Errorf("only %v refused by the stricter configuration: the test's requests are not what it meant", nowRefused)
	}
	t.Logf("%d requests in the log, %d followed, %d replayed; the stricter candidate denies %v", same.Requests, same.Followed, same.Replayed, named)
}

// checkReplayCIFormats: each request now denied is a failed JUnit case and
// a SARIF error (each is denied by one policy), and the SARIF validates.
func checkReplayCIFormats(t *testing.T, nowDenied int, args ...string) {
	t.Helper()
	junitOut, errOut, code := runOffline(t, append([]string{"replay", "-o", "junit"}, args...)...)
	if code != 1 {
		t.Fatalf("admitd replay -o junit: exit %d\n%s", code, errOut)
	}
	if doc := parseJUnit(t, junitOut); doc.Failures != nowDenied {
		t.Errorf("JUnit: %d failures, want the %d requests now denied\n%s", doc.Failures, nowDenied, junitOut)
	}
	sarifOut, errOut, code := runOffline(t, append([]string{"replay", "-o", "sarif"}, args...)...)
	if code != 1 {
		t.Fatalf("admitd replay -o sarif: exit %d\n%s", code, errOut)
	}
	errs := 0
	for _, levels := range validateSARIF(t, sarifOut).levels() {
		errs += levels["error"]
	}
	if errs != nowDenied {
		t.Errorf("SARIF: %d errors, want the %d requests now denied\n%s", errs, nowDenied, sarifOut)
	}
}

// TestReplayUsageErrors: exit status 2 and what is wrong, before any
// server starts.
func TestReplayUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log, notLog, config := filepath.Join(dir, "audit.log"), filepath.Join(dir, "pods.log"), filepath.Join(dir, "config.yaml")
	writeFile(t, log, "")
	writeFile(t, notLog, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\"}\n")
	writeFile(t, config, stricterPolicies)
	for _, tc := range []struct {
		name string
		args []string
		out  string
	}{
		{"no log", []string{"-f", config}, "an audit log is required"},
		{"no candidate", []string{"--audit-log", log}, "a candidate configuration is required"},
		{"not an audit log", []string{"--audit-log", notLog, "-f", config}, "pods.log:1: not an audit.k8s.io/v1 Event"},
		{"bad output", []string{"--audit-log", log, "-f", config, "-o", "policyreport"}, "--output must be one of"},
		{"bad fail-on", []string{"--audit-log", log, "-f", config, "--fail-on", "warn"}, "--fail-on must be deny, change or none"},
		{"bad since-time", []string{"--audit-log", log, "-f", config, "--since-time", "yesterday"}, "--since-time"},
	} {
		out, errOut, code := runOffline(t, append([]string{"replay"}, tc.args...)...)
		if code != 2 || !strings.Contains(out+errOut, tc.out) {
			t.Errorf("%s: exit %d, want 2 with %q\nstdout: %s\nstderr: %s", tc.name, code, tc.out, out, errOut)
		}
	}
}

// metadataLevelLog is a create as an audit policy at level Metadata
// records it: no request or response object.
const metadataLevelLog = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"0d3c6a0e-5b1e-4f55-9a8e-2f7e33c1f0a1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/default/configmaps?fieldManager=kubectl-client-side-apply","verb":"create","user":{"username":"kubernetes-admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.37.2","objectRef":{"resource":"configmaps","namespace":"default","name":"a","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-11-29T10:00:00.000000Z","stageTimestamp":"2026-11-29T10:00:00.002000Z"}
`

// TestReplayOfNothingExitsTwo: a log without request bodies replays
// nothing: --fail-on deny cannot pass, exit 2 saying why and which audit
// level to record at; --fail-on none accepts it.
func TestReplayOfNothingExitsTwo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log, config := filepath.Join(dir, "audit.log"), filepath.Join(dir, "config.yaml")
	writeFile(t, log, metadataLevelLog)
	writeFile(t, config, stricterPolicies)
	out, errOut, code := runOffline(t, "replay", "--audit-log", log, "-f", config)
	if code != 2 || !strings.Contains(errOut, "nothing was replayed") || !strings.Contains(errOut, "level RequestResponse") ||
		!strings.Contains(out, "replayed 0 of 1") {
		t.Errorf("--fail-on deny: exit %d, want 2, the report and why nothing was replayed\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if _, errOut, code := runOffline(t, "replay", "--audit-log", log, "-f", config, "--fail-on", "none"); code != 0 {
		t.Errorf("--fail-on none: exit %d, want 0\nstderr: %s", code, errOut)
	}
}
