package e2e

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sarifSchema is the SARIF 2.1.0 JSON schema (2.1.0-rtm.5, the version
// published as 2.1.0; from the npm package @microsoft/jest-sarif).
const sarifSchema = "testdata/sarif-schema-2.1.0.json"

// validateSARIFScript validates argv[2] against the schema argv[1] and
// prints each error.
const validateSARIFScript = `import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
for e in errors:
    print("/".join(str(p) for p in e.path) + ": " + e.message)
sys.exit(1 if errors else 0)
`

// pythonWithJSONSchema is a python3 that imports jsonschema, or "".
func pythonWithJSONSchema() string {
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import jsonschema").Run() == nil {
			return p
		}
	}
	return ""
}

// validateSARIF checks doc against the SARIF 2.1.0 schema (with Python's
// jsonschema) and the fields the test relies on.
func validateSARIF(t *testing.T, doc string) sarifLog {
	t.Helper()
	var log sarifLog
	if err := json.Unmarshal([]byte(doc), &log); err != nil {
		t.Fatalf("SARIF output: %v\n%s", err, doc)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "admitd" {
		t.Errorf("SARIF version %q, %d runs: want 2.1.0, one run of admitd", log.Version, len(log.Runs))
	}
	python := pythonWithJSONSchema()
	if python == "" {
		msg := "no python3 on PATH imports jsonschema (Debian: apt-get install python3-jsonschema, as .ci/install-tools does)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Log(msg + ": the SARIF output is not checked against the schema")
		return log
	}
	path := filepath.Join(t.TempDir(), "out.sarif")
	writeFile(t, path, doc)
	out, err := exec.Command(python, "-c", validateSARIFScript, sarifSchema, path).CombinedOutput()
	if err != nil {
		t.Errorf("the SARIF output does not validate against the 2.1.0 schema: %v\n%s", err, out)
	}
	return log
}

type sarifLog struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID string `json:"id"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID  string `json:"ruleId"`
			Level   string `json:"level"`
			Message struct {
				Text string `json:"text"`
			} `json:"message"`
		} `json:"results"`
	} `json:"runs"`
}

// levels counts the results by level, per rule.
func (l sarifLog) levels() map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, r := range l.Runs[0].Results {
		if out[r.RuleID] == nil {
			out[r.RuleID] = map[string]int{}
		}
		out[r.RuleID][r.Level]++
	}
	return out
}

type ciJUnit struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, doc string) ciJUnit {
	t.Helper()
	var d ciJUnit
	if err := xml.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatalf("JUnit output: %v\n%s", err, doc)
	}
	return d
}

// TestAuditJUnitAndSARIF: admitd audit's denials are JUnit failures and
// SARIF errors, per policy and binding and per webhook, as many as in -o
// json; the SARIF validates against the 2.1.0 schema.
func TestAuditJUnitAndSARIF(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "policies.yaml"), auditPolicies)
	writeFile(t, filepath.Join(dir, "objects.yaml"), auditObjects())
	args := []string{"audit", "-f", filepath.Join(dir, "policies.yaml"), "--objects", filepath.Join(dir, "objects.yaml"), "--fail-on", "none"}
	out, errOut, code := runOffline(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("admitd audit -o json: exit %d\n%s%s", code, out, errOut)
	}
	var report auditReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatal(err)
	}
	denied := map[string]int{}
	for _, p := range report.Policies {
		if len(p.Denied) > 0 {
			denied[p.Name] = len(p.Denied)
		}
	}
	if denied["require-team"] == 0 || denied["max-replicas"] == 0 {
		t.Fatalf("denials %v: the test's objects are not what it meant", denied)
	}

	junitOut, errOut, code := runOffline(t, append(args, "-o", "junit")...)
	if code != 0 {
		t.Fatalf("admitd audit -o junit: exit %d\n%s", code, errOut)
	}
	junit := parseJUnit(t, junitOut)
	failures := map[string]int{}
	for _, s := range junit.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				failures[strings.Fields(s.Name)[1]]++
			}
		}
	}
	if !equalCounts(failures, denied) {
		t.Errorf("JUnit failures per policy %v, want the denials %v", failures, denied)
	}

	sarifOut, errOut, code := runOffline(t, append(args, "-o", "sarif")...)
	if code != 0 {
		t.Fatalf("admitd audit -o sarif: exit %d\n%s", code, errOut)
	}
	errorsByPolicy := map[string]int{}
	for rule, levels := range validateSARIF(t, sarifOut).levels() {
		if levels["error"] > 0 {
			errorsByPolicy[strings.Fields(rule)[1]] = levels["error"]
		}
	}
	if !equalCounts(errorsByPolicy, denied) {
		t.Errorf("SARIF errors per policy %v, want the denials %v", errorsByPolicy, denied)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
