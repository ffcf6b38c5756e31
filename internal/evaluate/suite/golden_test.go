package suite

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/junit.golden with the current output")

// TestWriteJUnitBytes: the JUnit XML of admitd test, byte for byte (CI
// systems diff and store it).
func TestWriteJUnitBytes(t *testing.T) {
	results := []CaseResult{
		{Suite: "s1", Case: "ok", Duration: 1500 * time.Millisecond},
		{Suite: "s1", Case: "bad <one>", Failures: []string{"code: got 1, want 2", "message: \"x\" & y"}, Duration: time.Second},
		{Suite: "s2", Case: "broken", Err: errors.New("reading x.yaml: no such file")},
		{Suite: "s1", Case: "later", Duration: 333 * time.Millisecond},
	}
	var b bytes.Buffer
	if err := WriteJUnit(&b, results); err != nil {
		t.Fatal(err)
	}
	var none bytes.Buffer
	if err := WriteJUnit(&none, nil); err != nil {
		t.Fatal(err)
	}
	got := append(b.Bytes(), none.Bytes()...)
	path := filepath.Join("testdata", "junit.golden")
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
		t.Fatalf("%v (create it with go test -run TestWriteJUnitBytes -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the JUnit XML differs from %s:\n%s\nwant:\n%s", path, got, want)
	}
}
