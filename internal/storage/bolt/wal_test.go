package bolt_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/storage/bolt"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/storagetest"
)

// neverCheckpoint keeps every change in the write-ahead log and the
// overlay until Compact or Close.
var neverCheckpoint = bolt.Options{CheckpointInterval: time.Hour, CheckpointEvents: 1 << 30}

// TestConformanceOverlay runs the suite with every change pending: reads
// are answered from the overlay on top of an empty file.
func TestConformanceOverlay(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return open(t, filepath.Join(t.TempDir(), "admitd.db"), neverCheckpoint)
	})
}

// TestConformanceFrequentCheckpoints runs the suite with a checkpoint every
// few changes, so that reads race checkpoints.
func TestConformanceFrequentCheckpoints(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return open(t, filepath.Join(t.TempDir(), "admitd.db"), bolt.Options{CheckpointEvents: 3, CheckpointInterval: time.Millisecond})
	})
}

// crashCopy copies the data file and its log as a crash would leave them.
var crashCopy = bolt.CrashCopy

func TestOpenReplaysTheLog(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := open(t, path, neverCheckpoint)
	for i := range 4 {
		mustCreate(t, s, fmt.Sprintf("/k/%d", i), "v1")
	}
	if _, err := s.Update(ctx, "/k/1", []byte("v2"), 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Delete(ctx, "/k/2", 0); err != nil {
		t.Fatal(err)
	}

	copied := open(t, crashCopy(t, path), bolt.Options{})
	if rev, _ := copied.Revision(ctx); rev != 6 {
		t.Fatalf("Revision() after replay = %d, want 6", rev)
	}
	got, err := copied.List(ctx, "/k/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/k/0=v1@1", "/k/1=v2@5", "/k/3=v1@4"}
	if fmt.Sprint(kvStrings(got.Items)) != fmt.Sprint(want) {
		t.Errorf("List after replay = %v, want %v", kvStrings(got.Items), want)
	}
	// History came back too: the key deleted at 6 is listed at 5.
	past, err := copied.List(ctx, "/k/", storage.ListOptions{Revision: 5})
	if err != nil || len(past.Items) != 4 {
		t.Errorf("List at 5 after replay = %v, %v; want 4 keys", kvStrings(past.Items), err)
	}
}

func TestOpenIgnoresATornLastRecord(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := open(t, path, neverCheckpoint)
	mustCreate(t, s, "/a", "1")
	mustCreate(t, s, "/b", "2")
	copyPath := crashCopy(t, path)
	// A third record whose write was cut short: never acknowledged.
	wal := copyPath + ".wal"
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	torn := append(data, data[:len(data)/2+3]...)
	if err := os.WriteFile(wal, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	copied := open(t, copyPath, bolt.Options{})
	if rev, _ := copied.Revision(ctx); rev != 2 {
		t.Errorf("Revision() = %d, want 2", rev)
	}
	// Writes continue after the torn record, and survive another crash.
	mustCreate(t, copied, "/c", "3")
	again := open(t, crashCopy(t, copyPath), bolt.Options{})
	if kv, err := again.Get(ctx, "/c"); err != nil || kv.ModRevision != 3 {
		t.Errorf("Get(/c) after a second recovery = %+v, %v; want revision 3", kv, err)
	}
}

// The log of another data file (another epoch) is not this file's: its
// records are not replayed, and the store opens with its own writes.
func TestOpenIgnoresAnotherFilesLog(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := open(t, path, bolt.Options{})
	mustCreate(t, s, "/a", "1")
	if err := s.Close(); err != nil { // a checkpoint: the file is at 1
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "admitd.db")
	o := open(t, other, neverCheckpoint)
	mustCreate(t, o, "/o/1", "x")
	mustCreate(t, o, "/o/2", "x")
	data, err := os.ReadFile(other + ".wal")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".wal", data, 0o600); err != nil {
		t.Fatal(err)
	}
	reopened := open(t, path, bolt.Options{})
	got, err := reopened.List(ctx, "/", storage.ListOptions{})
	if err != nil || fmt.Sprint(kvStrings(got.Items)) != "[/a=1@1]" {
		t.Errorf("List = %v, %v; want only /a", kvStrings(got.Items), err)
	}
}

func TestCompactCheckpointsFirst(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "admitd.db"), neverCheckpoint)
	for i := range 5 {
		mustCreate(t, s, fmt.Sprintf("/k/%d", i), "v")
	}
	if err := s.Compact(ctx, 4); err != nil {
		t.Fatalf("Compact(4) with pending changes = %v", err)
	}
	if _, err := s.List(ctx, "/k/", storage.ListOptions{Revision: 3}); !errors.Is(err, storage.ErrCompacted) {
		t.Errorf("List at 3 after Compact(4) = %v, want ErrCompacted", err)
	}
	if got, err := s.List(ctx, "/k/", storage.ListOptions{Revision: 4}); err != nil || len(got.Items) != 4 {
		t.Errorf("List at 4 = %d items, %v; want 4", len(got.Items), err)
	}
	if err := s.Compact(ctx, 9); !errors.Is(err, storage.ErrFutureRevision) {
		t.Errorf("Compact(9) at revision 5 = %v, want ErrFutureRevision", err)
	}
}

func mustCreate(t *testing.T, s *bolt.Store, key, value string) storage.KeyValue {
	t.Helper()
	kv, err := s.Create(t.Context(), key, []byte(value))
	if err != nil {
		t.Fatalf("Create(%s) = %v", key, err)
	}
	return kv
}

func kvStrings(kvs []storage.KeyValue) []string {
	var out []string
	for _, kv := range kvs {
		out = append(out, fmt.Sprintf("%s=%s@%d", kv.Key, kv.Value, kv.ModRevision))
	}
	return out
}

// A crash during an append can leave the file system's zero fill where the
// record was to go: that is a torn record too, not corruption.
func TestOpenIgnoresAZeroFilledTail(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := open(t, path, neverCheckpoint)
	mustCreate(t, s, "/a", "1")
	copyPath := crashCopy(t, path)
	f, err := os.OpenFile(copyPath+".wal", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	copied, err := bolt.Open(copyPath, bolt.Options{})
	if err != nil {
		t.Fatalf("Open with a zero-filled log tail = %v", err)
	}
	t.Cleanup(func() { _ = copied.Close() })
	if kv, err := copied.Get(ctx, "/a"); err != nil || kv.ModRevision != 1 {
		t.Errorf("Get(/a) = %+v, %v; want revision 1", kv, err)
	}
}

// A watcher owns the events it receives: changing one changes neither what
// the store returns nor what it writes at the next checkpoint.
func TestWatchedEventsAreCopies(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := open(t, path, neverCheckpoint)
	live, err := s.Watch(ctx, "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Stop()
	mustCreate(t, s, "/a", "abc")
	ev := <-live.Events()
	ev.KV.Value[0] = 'X'
	if kv, err := s.Get(ctx, "/a"); err != nil || string(kv.Value) != "abc" {
		t.Fatalf("Get after a watcher changed its event = %q, %v; want abc", kv.Value, err)
	}
	if err := s.Close(); err != nil { // checkpoints
		t.Fatal(err)
	}
	again := open(t, path, bolt.Options{})
	if kv, err := again.Get(ctx, "/a"); err != nil || string(kv.Value) != "abc" {
		t.Errorf("Get after the checkpoint = %q, %v; want abc", kv.Value, err)
	}
}

// Events replayed from the overlay are copies too.
func TestReplayedEventsAreCopies(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "admitd.db"), neverCheckpoint)
	mustCreate(t, s, "/a", "abc")
	mustCreate(t, s, "/b", "def")
	w, err := s.Watch(ctx, "/", 1) // replays revision 2
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := <-w.Events()
	ev.KV.Value[0] = 'X'
	if kv, err := s.Get(ctx, "/b"); err != nil || string(kv.Value) != "def" {
		t.Errorf("Get after a watcher changed a replayed event = %q, %v; want def", kv.Value, err)
	}
}
