package suite

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/internal/evaluate"
)

// TestExampleSuite runs the documented example (examples/eval): every case
// must pass.
func TestExampleSuite(t *testing.T) {
	suites, err := Load("../../../examples/eval")
	if err != nil {
		t.Fatal(err)
	}
	results := Run(context.Background(), suites, Options{})
	if len(results) < 5 {
		t.Fatalf("ran %d cases, want the example's (at least 5)", len(results))
	}
	for _, r := range results {
		if !r.Passed() {
			t.Errorf("%s/%s failed: %v %v", r.Suite, r.Case, r.Err, r.Failures)
		}
	}
}

func TestCheck(t *testing.T) {
	yes, no := true, false
	denied := &evaluate.Result{Decision: "Denied", Status: &metav1.Status{Code: 403, Message: `pods "p" is forbidden: no team`},
		Warnings: []string{"w1: old image"}, AuditAnnotations: map[string]string{"a/b": "c"}}
	allowed := &evaluate.Result{Allowed: true, Decision: "Allowed", Warnings: []string{},
		Object: map[string]any{"metadata": map[string]any{"name": "p", "labels": map[string]any{"team": "a"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx", "ports": []any{map[string]any{"containerPort": int64(80)}}}}}}}
	for _, tc := range []struct {
		name   string
		expect Expect
		r      *evaluate.Result
		fails  []string // substrings, one per expected failure
	}{
		{"denial met", Expect{Allowed: &no, Decision: "Denied", Code: 403, Message: "no team", Warnings: []string{"old image"},
			AuditAnnotations: map[string]string{"a/b": "c"}}, denied, nil},
		{"denial not met", Expect{Allowed: &yes, Code: 422, ExactMessage: "no team", AuditAnnotations: map[string]string{"a/b": "d", "x": "y"}},
			denied, []string{"allowed: got false", "code: got 403, want 422", `message: got "pods`, "audit annotation a/b: got", "audit annotation x: missing"}},
		{"object met", Expect{Allowed: &yes, NoWarnings: true,
			Object: map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "a"}}, "spec": map[string]any{"containers": []any{map[string]any{"ports": []any{map[string]any{"containerPort": 80}}}}}},
			Fields: map[string]any{"{.metadata.labels.team}": "a", ".spec.containers[0].ports[0].containerPort": 80, ".spec.containers[*].name": "c"}}, allowed, nil},
		{"object not met", Expect{Object: map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "b"}}},
			Fields: map[string]any{".metadata.labels.missing": "x", ".spec.containers[0].image": "busybox"}, Warnings: []string{"never"}},
			allowed, []string{"object: .metadata.labels.team: got \"a\", want \"b\"", "field .metadata.labels.missing: missing", `field .spec.containers[0].image: got "nginx", want "busybox"`, `none contains "never"`}},
		{"no object", Expect{Object: map[string]any{}}, denied, []string{"there is no final object"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(tc.expect, tc.r)
			if len(got) != len(tc.fails) {
				t.Fatalf("Check = %q, want %d failures like %q", got, len(tc.fails), tc.fails)
			}
			for i, want := range tc.fails {
				if !strings.Contains(got[i], want) {
					t.Errorf("failure %d = %q, want it to contain %q", i, got[i], want)
				}
			}
		})
	}
}

func TestWriteJUnit(t *testing.T) {
	results := []CaseResult{
		{Suite: "s1", Case: "ok", Duration: 1500 * time.Millisecond, Result: &evaluate.Result{}},
		{Suite: "s1", Case: "bad <one>", Failures: []string{"code: got 1, want 2", "message: x"}, Duration: time.Second},
		{Suite: "s2", Case: "broken", Err: errors.New("reading x.yaml: no such file")},
	}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, results); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Time     string `xml:"time,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Time     string `xml:"time,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				ClassName string `xml:"classname,attr"`
				Failure   *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the JUnit XML does not parse: %v\n%s", err, buf.String())
	}
	if doc.Tests != 3 || doc.Failures != 1 || doc.Errors != 1 || doc.Time != "2.500" || len(doc.Suites) != 2 {
		t.Fatalf("testsuites = %+v, want 3 tests, 1 failure, 1 error in 2.5s, 2 suites", doc)
	}
	s1 := doc.Suites[0]
	if s1.Name != "s1" || s1.Tests != 2 || s1.Failures != 1 || s1.Time != "2.500" {
		t.Errorf("suite s1 = %+v", s1)
	}
	bad := s1.Cases[1]
	if bad.Name != "bad <one>" || bad.ClassName != "s1" || bad.Failure == nil || bad.Failure.Text != "code: got 1, want 2\nmessage: x" {
		t.Errorf("failed case = %+v", bad)
	}
	if e := doc.Suites[1].Cases[0].Error; e == nil || !strings.Contains(e.Message, "no such file") {
		t.Errorf("errored case = %+v", doc.Suites[1].Cases[0])
	}
}

func TestLoadRefusesBadSuites(t *testing.T) {
	dir := t.TempDir()
	head := "apiVersion: eval.admitd.io/v1alpha1\nkind: TestSuite\n"
	for name, doc := range map[string]string{
		"no cases":       head + "cases: []\n",
		"unknown field":  head + "cases: [{name: a, object: {}, expct: {}}]\n",
		"no request":     head + "cases: [{name: a}]\n",
		"both requests":  head + "cases: [{name: a, request: r.yaml, object: {kind: Pod}}]\n",
		"duplicate name": head + "cases: [{name: a, request: r.yaml}, {name: a, request: r.yaml}]\n",
		"unnamed case":   head + "cases: [{request: r.yaml}]\n",
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadFile(p); err == nil {
			t.Errorf("LoadFile(%s) = nil error", name)
		}
	}
	other := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(other, []byte("apiVersion: v1\nkind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Dir(other)); err == nil {
		t.Error("Load(a directory without suites) = nil error")
	}
}

// TestCaseRequest checks that a case's CONNECT and impersonator reach the
// evaluation.
func TestCaseRequest(t *testing.T) {
	s := &Suite{Path: "suite.yaml", Name: "s"}
	c := Case{Name: "exec", Operation: "CONNECT", ResourceName: "web", Subresource: "exec", Namespace: "team-a",
		Object:       map[string]any{"apiVersion": "v1", "kind": "PodExecOptions", "command": []any{"ls"}},
		User:         &User{Name: "frank", Groups: []string{"testers"}},
		Impersonator: &User{Name: "dave", UID: "dave-uid", Groups: []string{"devs"}}}
	in, err := s.input(c)
	if err != nil {
		t.Fatal(err)
	}
	q := in.Request
	if q.Operation != "CONNECT" || q.Name != "web" || q.Subresource != "exec" || q.Namespace != "team-a" || q.Object.GetKind() != "PodExecOptions" {
		t.Errorf("request = %s %s/%s %s of %s, want CONNECT team-a/web exec of PodExecOptions", q.Operation, q.Namespace, q.Name, q.Subresource, q.Object.GetKind())
	}
	if q.User.Name != "frank" || q.Impersonator == nil || q.Impersonator.Name != "dave" || q.Impersonator.UID != "dave-uid" {
		t.Errorf("user %+v impersonated by %+v, want frank by dave", q.User, q.Impersonator)
	}
}
