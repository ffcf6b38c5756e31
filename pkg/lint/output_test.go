package lint

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// sampleFindings lints a few fixtures that need no probe.
func sampleFindings(t *testing.T) []Finding {
	t.Helper()
	s, err := Load("testdata/AL001-kube-system.yaml", "testdata/AL005-own-endpoints.yaml", "testdata/AL022-binding-missing-param.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fs := Run(context.Background(), s, Options{})
	if len(fs) != 4 {
		t.Fatalf("Run() = %d findings, want 4: %+v", len(fs), fs)
	}
	return fs
}

// TestSARIF checks the log against the properties SARIF 2.1.0's schema
// requires: version and runs; tool.driver.name; rules with ids; results
// with a message text, a ruleId that the driver lists at ruleIndex, a
// level from the schema's enumeration, and locations whose physical
// location has an artifactLocation.
func TestSARIF(t *testing.T) {
	fs := sampleFindings(t)
	var b bytes.Buffer
	if err := WriteSARIF(&b, fs); err != nil {
		t.Fatal(err)
	}
	var log map[string]any
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatalf("SARIF is not JSON: %v", err)
	}
	if log["version"] != "2.1.0" || !strings.Contains(log["$schema"].(string), "sarif-2.1.0") {
		t.Errorf("version %v, $schema %v", log["version"], log["$schema"])
	}
	runs := log["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	run := runs[0].(map[string]any)
	driver := run["tool"].(map[string]any)["driver"].(map[string]any)
	if name, _ := driver["name"].(string); name == "" {
		t.Error("tool.driver.name is empty")
	}
	var ruleIDs []string
	for _, r := range driver["rules"].([]any) {
		rule := r.(map[string]any)
		id, _ := rule["id"].(string)
		if id == "" || rule["shortDescription"].(map[string]any)["text"] == "" {
			t.Errorf("rule %v lacks id or shortDescription.text", rule)
		}
		ruleIDs = append(ruleIDs, id)
	}
	results := run["results"].([]any)
	if len(results) != len(fs) {
		t.Fatalf("%d results, want %d", len(results), len(fs))
	}
	for i, r := range results {
		res := r.(map[string]any)
		if text, _ := res["message"].(map[string]any)["text"].(string); text != fs[i].Message {
			t.Errorf("result %d message %q, want %q", i, text, fs[i].Message)
		}
		idx := int(res["ruleIndex"].(float64))
		if res["ruleId"] != fs[i].ID || ruleIDs[idx] != fs[i].ID {
			t.Errorf("result %d ruleId %v ruleIndex %d (%s), want %s", i, res["ruleId"], idx, ruleIDs[idx], fs[i].ID)
		}
		if level := res["level"].(string); !slices.Contains([]string{"none", "note", "warning", "error"}, level) {
			t.Errorf("result %d level %q", i, level)
		}
		loc := res["locations"].([]any)[0].(map[string]any)
		uri := loc["physicalLocation"].(map[string]any)["artifactLocation"].(map[string]any)["uri"]
		if uri != strings.Split(fs[i].Object.Source, "#")[0] {
			t.Errorf("result %d uri %v, want the file of %s", i, uri, fs[i].Object.Source)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	fs := sampleFindings(t)
	var b bytes.Buffer
	if err := WriteJSON(&b, fs); err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(b.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Findings, fs) {
		t.Errorf("JSON round trip changed the findings:\n%+v\nwant\n%+v", r.Findings, fs)
	}
	if r.Summary != (Summary{Errors: 4}) {
		t.Errorf("summary %+v, want 4 errors", r.Summary)
	}
}

func TestText(t *testing.T) {
	fs := sampleFindings(t)
	var b bytes.Buffer
	if err := WriteText(&b, fs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"ValidatingWebhookConfiguration endpointslices (testdata/AL005-own-endpoints.yaml#1)\n  error   AL002  ",
		"  error   AL005  ", "          why:   ", "          fix:   ",
		"\n4 findings: 4 error(s), 0 warning(s), 0 info\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if got := strings.Count(out, "ValidatingWebhookConfiguration endpointslices"); got != 1 {
		t.Errorf("object heading printed %d times, want once (grouped)", got)
	}
	b.Reset()
	_ = WriteText(&b, nil)
	if b.String() != "no findings\n" {
		t.Errorf("WriteText(nil) = %q", b.String())
	}
}
