package bolt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/storage"
)

// CrashCopy copies the data file at path and its log files as a crash
// would leave them while the store is still open: its pending changes are
// only in the log. (Exported for the package's external tests.)
func CrashCopy(t *testing.T, path string) string {
	t.Helper()
	dir := t.TempDir()
	for _, suffix := range append([]string{""}, walSuffixes[:]...) {
		data, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "admitd.db"+suffix), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "admitd.db")
}

func mustOpen(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%s) = %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var keepPending = Options{CheckpointInterval: time.Hour, CheckpointEvents: 1 << 30}

// A log of the file's own epoch that does not continue it is refused: it
// holds acknowledged writes that cannot be applied.
func TestOpenRefusesALogWithAGap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := mustOpen(t, path, Options{})
	if _, err := s.Create(t.Context(), "/a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil { // a checkpoint: the file is at 1, in a new epoch
		t.Fatal(err)
	}
	reopened := mustOpen(t, path, Options{})
	epoch := reopened.wal.epoch()
	_ = reopened.Close()
	rec := encodeWALRecord(epoch, 3, []storage.Event{{Type: storage.EventPut, KV: storage.KeyValue{Key: "/c", Value: []byte("3"), CreateRevision: 3, ModRevision: 3}}})
	if err := os.WriteFile(path+".wal", rec, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(path, Options{}); err == nil {
		_ = s.Close()
		t.Fatal("Open with a log starting at 3 over a file at 1 succeeded, want an error")
	} else if !errors.Is(err, errWALGap) || !strings.Contains(err.Error(), "starts at revision 3, the file is at 1") {
		t.Errorf("Open error = %v, want it to name the gap", err)
	}
}

// After a crash, a new data file in place of the old one does not take the
// old one's log for its own: nothing comes back, and it opens.
func TestANewDataFileIgnoresTheOldLog(t *testing.T) {
	for _, checkpoints := range []int{0, 1, 2} {
		ctx := t.Context()
		path := filepath.Join(t.TempDir(), "admitd.db")
		s := mustOpen(t, path, keepPending)
		for i := range 4 {
			if _, err := s.Create(ctx, "/old/"+string(rune('0'+i)), []byte("v")); err != nil {
				t.Fatal(err)
			}
			if i%2 == 1 && i/2 < checkpoints {
				if err := s.flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		copied := CrashCopy(t, path)
		if err := os.Remove(copied); err != nil {
			t.Fatal(err)
		}
		fresh := mustOpen(t, copied, Options{})
		if rev, _ := fresh.Revision(ctx); rev != 0 {
			t.Errorf("%d checkpoints: a new data file beside the old log is at revision %d, want 0", checkpoints, rev)
		}
	}
}

// Bytes inside a stale record that happen to form a record (here, a value
// holding one) are not replayed when new records end where they begin,
// even when they were forged in the epochs the data file named when they
// were written (more than anyone outside the process can know): a log file
// is written over only in an epoch picked after its last write.
func TestStaleBytesInsideARecordAreNotReplayed(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := mustOpen(t, path, Options{CheckpointInterval: time.Hour, CheckpointEvents: 1 << 30})
	fake := func(epoch uint64) []byte {
		return encodeWALRecord(epoch, 4, []storage.Event{{Type: storage.EventPut,
			KV: storage.KeyValue{Key: "/forged", Value: []byte("evil"), CreateRevision: 4, ModRevision: 4}}})
	}
	known := s.epochs // read before the writer runs
	forged := append(fake(known.cur), fake(known.next)...)
	value := []byte(strings.Repeat("x", 200) + string(forged))
	rec1 := encodeWALRecord(known.cur, 1, []storage.Event{{Type: storage.EventPut,
		KV: storage.KeyValue{Key: "/a", Value: value, CreateRevision: 1, ModRevision: 1}}})
	off := strings.Index(string(rec1), string(forged))
	mustCreateInternal(t, s, "/a", value) // revision 1, in the first file
	mustFlush(t, s)                       // the writer turns to the second file
	mustCreateInternal(t, s, "/c", []byte("c"))
	mustFlush(t, s) // and back to the first, written from its start
	var filler []byte
	for n := range off {
		v := []byte(strings.Repeat("y", n))
		if len(encodeWALRecord(0, 3, []storage.Event{{Type: storage.EventPut, // the epoch is not in the record
			KV: storage.KeyValue{Key: "/b", Value: v, CreateRevision: 3, ModRevision: 3}}})) == off {
			filler = v
			break
		}
	}
	if filler == nil {
		t.Fatal("no filler of the right size")
	}
	mustCreateInternal(t, s, "/b", filler) // revision 3, written at offset 0 over /a's record
	copied := mustOpen(t, CrashCopy(t, path), Options{})
	if kv, err := copied.Get(ctx, "/forged"); err == nil {
		t.Errorf("after a crash, /forged = %q@%d; it was never written", kv.Value, kv.ModRevision)
	}
	if kv, err := copied.Get(ctx, "/b"); err != nil || kv.ModRevision != 3 {
		t.Errorf("after a crash, Get(/b) = %d, %v; want revision 3", kv.ModRevision, err)
	}
}

func mustCreateInternal(t *testing.T, s *Store, key string, value []byte) {
	t.Helper()
	if _, err := s.Create(t.Context(), key, value); err != nil {
		t.Fatal(err)
	}
}

func mustFlush(t *testing.T, s *Store) {
	t.Helper()
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
}
