package bolt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/admitd/admitd/pkg/storage"
)

// TestWALRefusesAppendsAfterAnUnrepairableFailure: when a failed write
// cannot be cut off the log again, no later record is appended behind it
// (it could not be recovered past the partial one).
func TestWALRefusesAppendsAfterAnUnrepairableFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path) // read-only: writes and truncation fail
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := &wal{f: f}
	ev := []storage.Event{{Type: storage.EventPut, KV: storage.KeyValue{Key: "/a", Value: []byte("1"), CreateRevision: 1, ModRevision: 1}}}
	first := w.append(1, ev)
	if first == nil {
		t.Fatal("append to a read-only file succeeded")
	}
	if w.broken == nil {
		t.Fatal("the log is not marked unusable after a write it could not undo")
	}
	if err := w.append(1, ev); !errors.Is(err, w.broken) {
		t.Errorf("second append = %v, want the unusable-log error %v", err, w.broken)
	}
}
