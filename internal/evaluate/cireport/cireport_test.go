package cireport

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/admitd/admitd/pkg/sarif"
)

func TestJUnitCountsTestsAndFailures(t *testing.T) {
	var b bytes.Buffer
	err := WriteJUnit(&b, "admitd audit", []Suite{
		{Name: "ValidatingAdmissionPolicy p (binding b)", Cases: []Case{
			{Name: "ConfigMap a/x", Failure: &Failure{Type: "deny", Message: "needs <team> & more"}},
			{Name: "ConfigMap a/y", SystemOut: "warning: w"},
		}},
		{Name: "MutatingAdmissionWebhook w (configuration c)", Cases: []Case{{Name: "Secret a/s"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				ClassName string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if doc.Name != "admitd audit" || doc.Tests != 3 || doc.Failures != 1 || len(doc.Suites) != 2 {
		t.Fatalf("testsuites %+v, want 3 tests, 1 failure, 2 suites", doc)
	}
	s := doc.Suites[0]
	if s.Tests != 2 || s.Failures != 1 || s.Cases[0].Failure == nil || s.Cases[0].Failure.Message != "needs <team> & more" ||
		s.Cases[0].ClassName != s.Name || s.Cases[1].SystemOut != "warning: w" {
		t.Errorf("first suite %+v", s)
	}
	if !strings.HasPrefix(b.String(), xml.Header) {
		t.Errorf("no XML header:\n%s", b.String())
	}
}

// TestSARIFHasTheRequiredFields checks what the SARIF 2.1.0 schema
// requires (sarifLog: version, runs; run: tool; toolComponent: name;
// reportingDescriptor: id; result: message with text; region startLine
// of at least 1) and that each result's ruleIndex is its rule's.
func TestSARIFHasTheRequiredFields(t *testing.T) {
	var b bytes.Buffer
	err := WriteSARIF(&b, Tool{Name: "admitd"}, []Rule{{ID: "r1", Name: "one"}, {ID: "r2"}}, []Result{
		{RuleID: "r2", Level: LevelError, Message: "denied", Object: "ConfigMap a/x", File: "objects.yaml"},
		{RuleID: "r1", Level: LevelWarning, Message: "warned", File: "audit.log", Line: 7, Properties: map[string]any{"auditID": "x"}},
		{RuleID: "r1", Level: LevelNote, Message: "noted"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["version"] != "2.1.0" || doc["$schema"] != sarif.Schema {
		t.Errorf("version %v, $schema %v", doc["version"], doc["$schema"])
	}
	run := doc["runs"].([]any)[0].(map[string]any)
	driver := run["tool"].(map[string]any)["driver"].(map[string]any)
	if driver["name"] != "admitd" {
		t.Errorf("driver %v", driver)
	}
	rules := driver["rules"].([]any)
	results := run["results"].([]any)
	if len(rules) != 2 || len(results) != 3 {
		t.Fatalf("%d rules, %d results", len(rules), len(results))
	}
	for i, r := range results {
		res := r.(map[string]any)
		idx := int(res["ruleIndex"].(float64))
		if rules[idx].(map[string]any)["id"] != res["ruleId"] {
			t.Errorf("result %d: ruleIndex %d is not rule %v", i, idx, res["ruleId"])
		}
		if res["message"].(map[string]any)["text"] == "" {
			t.Errorf("result %d has no message text", i)
		}
	}
	second := results[1].(map[string]any)
	loc := second["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
	if loc["region"].(map[string]any)["startLine"] != float64(7) || loc["artifactLocation"].(map[string]any)["uri"] != "audit.log" {
		t.Errorf("location %v", loc)
	}
	if _, ok := results[2].(map[string]any)["locations"]; ok {
		t.Errorf("a result without object or file has locations: %v", results[2])
	}
	first := results[0].(map[string]any)["locations"].([]any)[0].(map[string]any)
	if _, ok := first["physicalLocation"].(map[string]any)["region"]; ok {
		t.Errorf("a result without a line has a region: %v", first)
	}
}
