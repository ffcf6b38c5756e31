package e2e

import (
	"github.com/admitd/admitd/test/e2e/harness"

	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runOffline runs the binary with args and returns stdout, stderr and the
// exit status.
func runOffline(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(harness.Bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), errb.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("admitd %v: %v", args, err)
	}
	return out.String(), errb.String(), 0
}

const evalExample = "../../examples/eval"

func TestEvalExitStatus(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(evalExample, "config")
	responses := filepath.Join(evalExample, "responses.yaml")
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout (or stderr for status 2)
	}{
		{"allowed", []string{"-f", cfg, "--request", filepath.Join(evalExample, "requests/pod.yaml"), "--as", "alice",
			"--webhook-responses", responses}, 0, `+ metadata.labels.cost-centre: "cc-7"`},
		{"denied", []string{"-f", cfg, "--request", filepath.Join(evalExample, "requests/pod-no-team.yaml"), "--as", "alice",
			"--webhook-responses", responses}, 1, "decision: Denied (403 Forbidden)"},
		{"service webhook without a recorded response", []string{"-f", cfg, "--request", filepath.Join(evalExample, "requests/pod.yaml")},
			2, `webhook "cost-centre.example.com" of MutatingWebhookConfiguration cost-centre calls Service platform/cost-centre`},
		{"no request", []string{"-f", cfg}, 2, "a request is required"},
		{"unknown flag", []string{"--requets", "x.yaml"}, 2, "unknown flag"},
		{"bad output", []string{"--request", "x.yaml", "-o", "xml"}, 2, "--output must be one of"},
		{"missing file", []string{"--request", "nowhere.yaml"}, 2, "nowhere.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runOffline(t, append([]string{"eval"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("admitd eval: exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			if !strings.Contains(out+errOut, tc.out) {
				t.Errorf("admitd eval: output lacks %q\nstdout: %s\nstderr: %s", tc.out, out, errOut)
			}
		})
	}
}

func TestEvalJSONOfAnAdmissionReview(t *testing.T) {
	t.Parallel()
	review := filepath.Join(t.TempDir(), "review.json")
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","operation":"DELETE",
	  "kind":{"group":"","version":"v1","kind":"ConfigMap"},"resource":{"group":"","version":"v1","resource":"configmaps"},
	  "namespace":"team-a","name":"billing","userInfo":{"username":"alice","groups":["team-a"]}}}`
	if err := os.WriteFile(review, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runOffline(t, "eval", "-f", filepath.Join(evalExample, "config"), "--request", review,
		"--webhook-responses", filepath.Join(evalExample, "responses.yaml"), "-o", "json")
	if code != 1 {
		t.Fatalf("admitd eval: exit %d, want 1\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	var r struct {
		Kind     string
		Decision string
		Status   struct{ Message string }
		Trace    struct {
			Request struct{ User, Operation string }
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decoding %s: %v", out, err)
	}
	if r.Kind != "Evaluation" || r.Decision != "Denied" || !strings.Contains(r.Status.Message, "this ConfigMap is protected") ||
		r.Trace.Request.User != "alice" || r.Trace.Request.Operation != "DELETE" {
		t.Errorf("admitd eval -o json = %+v", r)
	}
}

func TestTestJUnit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	junit := filepath.Join(dir, "ok.xml")
	out, errOut, code := runOffline(t, "test", evalExample, "--junit", junit)
	if code != 0 || !strings.Contains(out, "passed, 0 failed") {
		t.Fatalf("admitd test %s: exit %d\nstdout: %s\nstderr: %s", evalExample, code, out, errOut)
	}
	if doc := readJUnit(t, junit); doc.Tests == 0 || doc.Failures != 0 {
		t.Errorf("JUnit of the example = %+v, want tests and no failures", doc)
	}

	failing := filepath.Join(dir, "failing.yaml")
	suite := `apiVersion: eval.admitd.io/v1alpha1
kind: TestSuite
name: wrong
cases:
- name: expects a denial
  object: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
  expect: {allowed: false}
- name: expects the allowance
  object: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
  expect: {allowed: true, fields: {.metadata.namespace: default}}
`
	if err := os.WriteFile(failing, []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	junit = filepath.Join(dir, "failing.xml")
	out, errOut, code = runOffline(t, "test", failing, "--junit", junit)
	if code != 1 || !strings.Contains(out, "FAIL wrong/expects a denial") || !strings.Contains(out, "2 cases: 1 passed, 1 failed") {
		t.Fatalf("admitd test (failing): exit %d, want 1\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	doc := readJUnit(t, junit)
	if doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 1 || doc.Suites[0].Cases[0].Failure == nil {
		t.Errorf("JUnit = %+v, want 2 tests, the first failed", doc)
	}
	if _, _, code := runOffline(t, "test", filepath.Join(dir, "none")); code != 2 {
		t.Errorf("admitd test of a missing path: exit %d, want 2", code)
	}
}

type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Cases []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return doc
}

// TestEvalConnectAndImpersonator drives the CONNECT and impersonation
// flags: an exec admitted (exit 0, the server's answer after admission
// shown), and a user impersonating another without the permission to
// (exit 1, the server's 403).
func TestEvalConnectAndImpersonator(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	execOpts := filepath.Join(dir, "exec.yaml")
	cm := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(execOpts, []byte("apiVersion: v1\nkind: PodExecOptions\ncommand: [ls]\nstdout: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cm, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runOffline(t, "eval", "--request", execOpts, "--operation", "CONNECT", "--name", "web", "-n", "team-a")
	if code != 0 || !strings.Contains(out, "decision: Allowed") || !strings.Contains(out, `the server then answered 404 Not Found: pods "web" not found`) {
		t.Errorf("admitd eval CONNECT: exit %d, want 0 and the answer after admission\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	out, errOut, code = runOffline(t, "eval", "--request", cm, "--as", "frank", "--impersonator", "dave", "--impersonator-group", "devs",
		"--authorization-mode", "RBAC", "-o", "json")
	if code != 1 || !strings.Contains(out, `User \"dave\" cannot impersonate`) {
		t.Errorf("admitd eval --impersonator without permission: exit %d, want 1 and a 403\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
