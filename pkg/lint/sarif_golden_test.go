package lint

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/sarif.golden with the current output")

// TestSARIFBytes: admitd lint -o sarif's log, byte for byte (code scanning
// services store and diff it).
func TestSARIFBytes(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSARIF(&b, sampleFindings(t)); err != nil {
		t.Fatal(err)
	}
	if err := WriteSARIF(&b, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "sarif.golden")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with go test -run TestSARIFBytes -update)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("the SARIF log differs from %s:\n%s\nwant:\n%s", path, b.Bytes(), want)
	}
}
