package audit

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"reflect"
	"testing"
)

func ciReport() *Report {
	return &Report{Policies: []*Policy{{Plugin: "ValidatingAdmissionPolicy", Name: "p", Configuration: "b",
		Denied:  []Finding{{Object: ref("a", "x"), Message: "no"}},
		Warned:  []Finding{{Object: ref("a", "x"), Warnings: []string{"careful"}}, {Object: ref("a", "y"), Warnings: []string{"careful"}}},
		Mutated: []Finding{{Object: ref("a", "z"), Patch: json.RawMessage(`[{"op":"add","path":"/a","value":1}]`)}},
		Errors:  []Finding{{Object: ref("a", "w"), Message: "failed open (failurePolicy Ignore): timeout"}},
		Passed:  []*ObjectRef{refp("a", "v")},
	}}}
}

// TestJUnitHasACasePerObjectFailedWhenDenied: an object denied and warned
// is one failed case; warned, mutated, failed-open and passed objects are
// cases that pass.
func TestJUnitHasACasePerObjectFailedWhenDenied(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, ciReport(), "junit"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name      string    `xml:"name,attr"`
				Failure   *struct{} `xml:"failure"`
				SystemOut string    `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tests != 5 || doc.Failures != 1 || len(doc.Suites) != 1 || doc.Suites[0].Name != "ValidatingAdmissionPolicy p (binding b)" {
		t.Fatalf("%+v, want one suite of 5 cases, 1 failed\n%s", doc, b.String())
	}
	var names []string
	for _, c := range doc.Suites[0].Cases {
		names = append(names, c.Name)
	}
	if want := []string{"ConfigMap a/x", "ConfigMap a/w", "ConfigMap a/y", "ConfigMap a/z", "ConfigMap a/v"}; !reflect.DeepEqual(names, want) {
		t.Errorf("cases %v, want %v", names, want)
	}
	if x := doc.Suites[0].Cases[0]; x.Failure == nil || x.SystemOut != "warning: careful\n" {
		t.Errorf("x: %+v", x)
	}
}

func TestSARIFLevelsFollowTheFindings(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, ciReport(), "sarif"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
				Level  string `json:"level"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var levels []string
	for _, r := range doc.Runs[0].Results {
		levels = append(levels, r.Level)
		if r.RuleID != "ValidatingAdmissionPolicy p (binding b)" {
			t.Errorf("rule %q", r.RuleID)
		}
	}
	if want := []string{"error", "warning", "warning", "warning", "note"}; !reflect.DeepEqual(levels, want) {
		t.Errorf("levels %v, want %v (denied, failed open, 2 warned, mutated)", levels, want)
	}
}
