//go:build ignore

// The admitd test side of the comparison (see evaltarget.go, which this
// file goes with into the copy of the harness).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The admitd test side: every evaluable scenario without webhook
// endpoints (nothing to script between cases) becomes a case of a
// generated TestSuite whose expectations are the http target's result:
// allowed, the status code and exact message, each warning and audit
// annotation, and the final object as a partial object. Values the
// harness normalised (UUID, 127.0.0.1:PORT, TIMESTAMP, kube-api-access-XXXXX,
// CLUSTERIP) are left out of the expectations. `admitd test` runs the
// suite in one process; every case must pass.

// testCase is one generated case (the suite file is JSON, which is YAML).
type testCase struct {
	Name         string                 `json:"name"`
	Request      string                 `json:"request"`
	Files        []string               `json:"files"`
	Impersonator map[string]interface{} `json:"impersonator,omitempty"`
	Expect       map[string]interface{} `json:"expect"`
}

// suiteFor writes the suite of scs to dir and returns its path and the
// number of cases.
func suiteFor(dir string, scs []*Scenario, httpResults string, evalFlags []string) (string, int, error) {
	var cases []testCase
	for _, sc := range scs {
		if notEvaluable(sc, scs) != "" || len(sc.Endpoints) > 0 || len(sc.Services) > 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(httpResults, sc.Area, sc.Name+".json"))
		if err != nil {
			return "", 0, err
		}
		var want Result
		if err := json.Unmarshal(b, &want); err != nil {
			return "", 0, err
		}
		if want.HarnessError != "" {
			continue // no request was sent
		}
		c, err := caseFor(dir, sc, &want)
		if err != nil {
			return "", 0, err
		}
		cases = append(cases, c)
	}
	suite := map[string]interface{}{"apiVersion": "eval.admitd.io/v1alpha1", "kind": "TestSuite", "name": "conformance",
		"server": suiteServer(evalFlags), "cases": cases}
	b, err := json.MarshalIndent(suite, "", "  ")
	if err != nil {
		return "", 0, err
	}
	path := filepath.Join(dir, "suite.yaml")
	return path, len(cases), os.WriteFile(path, b, 0o644)
}

func caseFor(dir string, sc *Scenario, want *Result) (testCase, error) {
	repl := map[string]string{}
	objects, err := objectsFile(sc, repl)
	if err != nil {
		return testCase{}, err
	}
	review, err := reviewOf(sc, repl)
	if err != nil {
		return testCase{}, err
	}
	base := filepath.Join(dir, strings.ReplaceAll(sc.ID(), "/", "_"))
	if err := os.WriteFile(base+"-objects.json", objects, 0o644); err != nil {
		return testCase{}, err
	}
	if err := os.WriteFile(base+"-request.json", review, 0o644); err != nil {
		return testCase{}, err
	}
	c := testCase{Name: sc.ID(), Request: base + "-request.json", Files: []string{base + "-objects.json"}, Expect: expectOf(want)}
	if u := impersonator(sc); u != nil {
		c.Impersonator = map[string]interface{}{"name": u.Username, "uid": u.UID, "groups": u.Groups}
	}
	return c, nil
}

func expectOf(want *Result) map[string]interface{} {
	e := map[string]interface{}{"allowed": want.Allowed}
	if st := want.Status; st != nil {
		e["code"] = st.Code
		if !normalised(st.Message) {
			e["exactMessage"] = st.Message
		}
	}
	var warnings []string
	for _, w := range want.Warnings {
		if !normalised(w) {
			warnings = append(warnings, w)
		}
	}
	if len(want.Warnings) == 0 {
		e["noWarnings"] = true
	} else if len(warnings) > 0 {
		e["warnings"] = warnings
	}
	annotations := map[string]string{}
	for k, v := range want.AuditAnnotations {
		if !normalised(v) {
			annotations[k] = v
		}
	}
	if len(annotations) > 0 {
		e["auditAnnotations"] = annotations
	}
	if obj, ok := prune(want.Object).(map[string]interface{}); ok && len(obj) > 0 {
		e["object"] = obj
	}
	return e
}

var placeholders = []string{"UUID", "127.0.0.1:PORT", "TIMESTAMP", "kube-api-access-XXXXX", "CLUSTERIP", "WEBHOOK"}

func normalised(s string) bool {
	for _, p := range placeholders {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// prune drops the values the harness normalised (a list that holds one
// is dropped whole: its length would no longer say anything).
func prune(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		out := map[string]interface{}{}
		for k, vv := range t {
			if p := prune(vv); p != nil {
				out[k] = p
			}
		}
		return out
	case []interface{}:
		out := make([]interface{}, 0, len(t))
		for _, vv := range t {
			p := prune(vv)
			if p == nil {
				return nil
			}
			out = append(out, p)
		}
		return out
	case string:
		if normalised(t) {
			return nil
		}
	}
	return v
}

// suiteServer is the suite's server: the eval flags, in the suite's terms.
// A server calls webhooks behind Services it cannot reach (and fails), as
// the http target's does.
func suiteServer(flags []string) map[string]interface{} {
	out := map[string]interface{}{"callUnreachableWebhooks": true}
	for _, f := range flags {
		name, value, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		switch name {
		case "enable-admission-plugins":
			out["enableAdmissionPlugins"] = strings.Split(value, ",")
		case "authorization-mode":
			out["authorizationMode"] = strings.Split(value, ",")
		case "quota-controller":
			out["quotaController"] = value == "true"
		}
	}
	return out
}

// runSuite runs admitd test on the generated suite and reports; 3 when a
// case fails (1 is a harness failure).
func runSuite(admitd, dir string, scs []*Scenario, httpResults string, evalFlags []string) int {
	path, n, err := suiteFor(dir, scs, httpResults, evalFlags)
	if err != nil {
		fmt.Fprintln(os.Stderr, "generating the admitd test suite:", err)
		return 1
	}
	if n == 0 {
		fmt.Println("admitd test: no scenario without webhook endpoints")
		return 0
	}
	cmd := exec.Command(admitd, "test", path, "--junit", filepath.Join(dir, "junit.xml"))
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "PASS ") {
			fmt.Println(line)
		}
	}
	if err != nil {
		fmt.Printf("admitd test: %v\n", err)
		return 3
	}
	return 0
}
