package e2e

import (
	"github.com/admitd/admitd/test/e2e/harness"

	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lintReport is `admitd lint -o json`'s output.
type lintReport struct {
	Findings []struct {
		ID       string `json:"id"`
		Severity string `json:"severity"`
		Webhook  string `json:"webhook"`
		Object   struct {
			Kind, Name string
		} `json:"object"`
	} `json:"findings"`
}

// runLint runs `admitd lint` with args and env, and returns stdout,
// stderr and the exit status.
func runLint(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(harness.Bin, append([]string{"lint"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), errb.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("admitd lint: %v", err)
	}
	return out.String(), errb.String(), 0
}

func lintJSON(t *testing.T, env []string, args ...string) lintReport {
	t.Helper()
	out, errOut, code := runLint(t, env, append(args, "-o", "json", "--fail-on", "none")...)
	var r lintReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("admitd lint %v: exit %d, %v\nstdout: %s\nstderr: %s", args, code, err, out, errOut)
	}
	return r
}

func (r lintReport) ids() []string {
	var out []string
	for _, f := range r.Findings {
		if !slices.Contains(out, f.ID) {
			out = append(out, f.ID)
		}
	}
	slices.Sort(out)
	return out
}

// TestLintFiles runs the binary on the fixtures of pkg/lint: each gives
// the rule IDs its "# want:" line declares, the exit status follows
// --fail-on, and SARIF is well formed.
func TestLintFiles(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("../../pkg/lint/testdata/*.yaml")
	if err != nil || len(paths) < 10 {
		t.Fatalf("fixtures: %v %v", paths, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if strings.Contains(text, "# probe: true") {
			continue // need servers; pkg/lint's tests start them
		}
		var want []string
		for _, line := range strings.Split(text, "\n") {
			if rest, ok := strings.CutPrefix(line, "# want:"); ok {
				want = strings.Fields(rest)
			}
		}
		if got := lintJSON(t, nil, "-f", p).ids(); !slices.Equal(got, want) {
			t.Errorf("admitd lint -f %s found %v, want %v", filepath.Base(p), got, want)
		}
	}

	out, _, code := runLint(t, nil, "-f", "../../pkg/lint/testdata/samplewebhook.yaml")
	if code != 0 || out != "no findings\n" {
		t.Errorf("lint of the sample webhook's configuration: exit %d, %q; want 0, no findings", code, out)
	}
	out, errOut, code := runLint(t, nil, "-f", "../../pkg/lint/testdata/AL001-kube-system.yaml")
	if code != 1 || !strings.Contains(out, "error   AL001") || !strings.Contains(errOut, "at or above error") {
		t.Errorf("lint of AL001's fixture: exit %d\n%s\n%s\nwant exit 1 with the finding", code, out, errOut)
	}
	if _, _, code := runLint(t, nil, "-f", "../../pkg/lint/testdata/AL009-v1beta1-only.yaml"); code != 0 {
		t.Errorf("a warning with the default --fail-on error: exit %d, want 0", code)
	}
	if _, _, code := runLint(t, nil, "-f", "../../pkg/lint/testdata/AL009-v1beta1-only.yaml", "--fail-on", "warning"); code != 1 {
		t.Errorf("a warning with --fail-on warning: exit %d, want 1", code)
	}
	// The probe fixtures hold placeholders where a caBundle goes: the
	// directory does not load, and lint says where.
	out, errOut, code = runLint(t, nil, "-f", "../../pkg/lint/testdata/", "--fail-on", "none")
	if code != 1 || out != "" || !strings.Contains(errOut, "AL010-cabundle-mismatch.yaml#1 ValidatingWebhookConfiguration/wrong-ca: ") {
		t.Errorf("lint of a directory with a bad file: exit %d, stdout %q, stderr %q; want 1 and the file named", code, out, errOut)
	}
	var sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	out, errOut, code = runLint(t, nil, "-f", "../../pkg/lint/testdata/AL006-fail-on-wildcard.yaml", "-o", "sarif")
	if err := json.Unmarshal([]byte(out), &sarif); err != nil || sarif.Version != "2.1.0" || len(sarif.Runs) != 1 ||
		len(sarif.Runs[0].Results) != 1 || sarif.Runs[0].Results[0].RuleID != "AL006" || code != 1 {
		t.Errorf("SARIF of AL006's fixture: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
}

// TestLintServer lints a running admitd: the sample webhook's
// configuration as the e2e suite registers it (probed over TLS), then a
// policy without binding, then a risky webhook configuration whose
// kubectl apply prints the findings as warnings.
func TestLintServer(t *testing.T) {
	t.Parallel()
	hook := startSampleWebhook(t)
	a := startAdmitd(t, filepath.Join(t.TempDir(), "data"))
	a.MustKubectl(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: sample-e2e, labels: {sample-webhook-e2e: \"true\"}}\n", "apply", "-f", "-")
	_, applyErr, err := a.Kubectl(t, sampleConfigs(hook), "apply", "-f", "-")
	if err != nil {
		t.Fatalf("applying the sample configuration: %v %s", err, applyErr)
	}
	env := []string{"KUBECONFIG=" + a.Kubeconfig}

	// admitd's e2e registers two of the sample webhooks with v1beta1
	// reviews only (to exercise them); upstream's suite lists v1 too.
	r := lintJSON(t, env, "--probe")
	var v1beta1Only []string
	for _, f := range r.Findings {
		if f.ID != "AL009" {
			t.Errorf("sample configuration on the server: finding %+v, want only AL009", f)
			continue
		}
		v1beta1Only = append(v1beta1Only, f.Webhook)
	}
	slices.Sort(v1beta1Only)
	if want := []string{"adding-configmap-data-stage-2.k8s.io", "deny-unwanted-configmap-data.k8s.io"}; !slices.Equal(v1beta1Only, want) {
		t.Errorf("AL009 for %v, want %v", v1beta1Only, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(applyErr), "\n") {
		if line != "" && !strings.HasPrefix(line, "Warning: AL009 (warning): ") {
			t.Errorf("applying the sample configuration printed %q, want only AL009 warnings", line)
		}
	}
	if n := strings.Count(applyErr, "Warning: AL009"); n != 2 {
		t.Errorf("applying the sample configuration printed %d AL009 warnings, want 2:\n%s", n, applyErr)
	}

	a.MustKubectl(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: unbound}
spec:
  matchConstraints:
    resourceRules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]
  validations: [{expression: "object.spec.replicas <= 5"}]
`, "apply", "-f", "-")
	if ids := lintJSON(t, nil, "--kubeconfig", a.Kubeconfig).ids(); !slices.Equal(ids, []string{"AL009", "AL020"}) {
		t.Errorf("after an unbound policy: %v, want [AL009 AL020]", ids)
	}

	// A binding whose param is missing, until it is created, and one whose
	// policy's paramKind the server does not serve.
	a.MustKubectl(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: unknown-param-kind}
spec:
  paramKind: {apiVersion: limits.example.com/v1, kind: Limit}
  matchConstraints:
    resourceRules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]
  validations: [{expression: "object.spec.replicas <= params.max"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: unknown-param-kind}
spec:
  policyName: unknown-param-kind
  paramRef: {name: default, parameterNotFoundAction: Deny}
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]
  validations: [{expression: "object.spec.replicas <= int(params.data.max)"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec:
  policyName: max-replicas
  paramRef: {name: replica-limits, namespace: default, parameterNotFoundAction: Deny}
  validationActions: [Deny]
`, "apply", "-f", "-")
	if ids := lintJSON(t, env).ids(); !slices.Equal(ids, []string{"AL009", "AL020", "AL022", "AL023"}) {
		t.Errorf("with a missing param: %v, want [AL009 AL020 AL022 AL023]", ids)
	}
	a.MustKubectl(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: replica-limits, namespace: default}\ndata: {max: \"3\"}\n", "apply", "-f", "-")
	if ids := lintJSON(t, env).ids(); !slices.Equal(ids, []string{"AL009", "AL020", "AL023"}) {
		t.Errorf("with the param created: %v, want [AL009 AL020 AL023]", ids)
	}

	// The example: deny-all on */*, failing closed, two 30s
	// timeouts, kube-system in scope. Applied last: it denies every write.
	risky := `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: deny-everything}
webhooks:
- name: deny-a.example.com
  clientConfig: {url: "` + hook.url + `/always-deny", caBundle: "` + hook.caBundle + `"}
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"]}]
  timeoutSeconds: 30
  sideEffects: None
  admissionReviewVersions: [v1]
- name: deny-b.example.com
  clientConfig: {url: "` + hook.url + `/always-deny", caBundle: "` + hook.caBundle + `"}
  rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"]}]
  timeoutSeconds: 30
  sideEffects: None
  admissionReviewVersions: [v1]
`
	_, warnings, err := a.Kubectl(t, risky, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply of the risky configuration: %v %s", err, warnings)
	}
	for _, want := range []string{"Warning: AL001 (error): webhook \"deny-a.example.com\" can intercept",
		"Warning: AL003 (error)", "Warning: AL004 (error)", "Warning: AL006 (error)", "Warning: AL007 (warning)"} {
		if !strings.Contains(warnings, want) {
			t.Errorf("kubectl apply stderr lacks %q:\n%s", want, warnings)
		}
	}
	out, errOut, code := runLint(t, env)
	if code != 1 || !strings.Contains(out, "MutatingWebhookConfiguration deny-everything") || !strings.Contains(out, "AL006") {
		t.Errorf("admitd lint on the server with the risky configuration: exit %d\n%s\n%s", code, out, errOut)
	}
}
