package cireport

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

// checkGolden compares got with testdata/name, which -update rewrites:
// the formats' bytes are what CI systems diff and store.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with go test -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the output differs from %s:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestJUnitBytes(t *testing.T) {
	var b bytes.Buffer
	err := WriteJUnit(&b, "admitd replay", []Suite{
		{Name: "ValidatingAdmissionPolicy p (binding b)", Cases: []Case{
			{Name: "ConfigMap a/x", Failure: &Failure{Type: "deny", Message: "needs <team> & \"more\"", Text: "line 1\nline 2"}},
			{Name: "ConfigMap a/y", SystemOut: "warning: w"},
			{Name: "ConfigMap a/z", ClassName: "other", Failure: &Failure{Message: "no type"}},
		}},
		{Name: "empty"},
		{Name: "MutatingAdmissionWebhook w (configuration c)", Cases: []Case{{Name: "Secret a/s"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "junit.golden", b.Bytes())
}

func TestSARIFBytes(t *testing.T) {
	var b bytes.Buffer
	err := WriteSARIF(&b, Tool{Name: "admitd", Version: "v1.2.3", InformationURI: "https://github.com/admitd/admitd"},
		[]Rule{{ID: "r1", Name: "one", Description: "rule <one>"}, {ID: "r2"}}, []Result{
			{RuleID: "r2", Level: LevelError, Message: "denied & more", Object: "ConfigMap a/x", File: "objects.yaml"},
			{RuleID: "r1", Level: LevelWarning, Message: "warned", Object: "create configmaps a/x", File: "audit.log", Line: 7,
				Properties: map[string]any{"auditID": "x", "patch": []any{map[string]any{"op": "add"}}}},
			{RuleID: "r1", Level: LevelNote, Message: "noted"},
			{RuleID: "r2", Level: LevelNote, Message: "object only", Object: "Secret a/s"},
		})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "sarif.golden", b.Bytes())
	var empty bytes.Buffer
	if err := WriteSARIF(&empty, Tool{Name: "admitd"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "sarif-empty.golden", empty.Bytes())
}
