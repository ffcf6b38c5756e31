package bolt

import (
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// failCheckpointsOf makes every checkpoint that writes key fail (a bucket
// where its value would go: bbolt refuses the put) until the returned
// function removes it.
func failCheckpointsOf(t *testing.T, s *Store, key string) (repair func()) {
	t.Helper()
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.Bucket(bucketKV).CreateBucket([]byte(key))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := s.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketKV).DeleteBucket([]byte(key)) }); err != nil {
			t.Fatal(err)
		}
	}
}

// A failed checkpoint is retried after the checkpoint interval (Options),
// not at once and over and over while the store is idle, even when more
// changes are pending than start a checkpoint.
func TestAFailedCheckpointWaitsForTheIntervalBeforeItsRetry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := mustOpen(t, path, Options{CheckpointInterval: time.Hour, CheckpointEvents: 2})
	repair := failCheckpointsOf(t, s, "/x")
	start := cursorsOf(s)
	mustCreateInternal(t, s, "/x", []byte("1"))
	mustCreateInternal(t, s, "/y", []byte("2")) // a checkpoint starts, and fails
	for deadline := time.Now().Add(10 * time.Second); cursorsOf(s) == start; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint was tried")
		}
	}
	time.Sleep(20 * time.Millisecond) // the writer takes its result
	before := cursorsOf(s)
	time.Sleep(200 * time.Millisecond) // idle
	if n := cursorsOf(s) - before; n > 0 {
		t.Errorf("%d cursors opened by write transactions while idle after a failed checkpoint; want none before the interval", n)
	}
	repair()
	mustFlush(t, s)
	if n, _ := s.overlay.size(); n != 0 {
		t.Errorf("%d changes pending after a checkpoint, want none", n)
	}
}

// cursorsOf counts the cursors the data file's write transactions opened
// (each put opens one), failed ones included.
func cursorsOf(s *Store) int64 {
	st := s.db.Stats()
	return st.TxStats.GetCursorCount()
}

// A checkpoint that fails after the writer turned leaves the writer in the
// file it turned to; the writes go on, in the next epoch, and a crash
// before the retry recovers both files. The retry does not turn, and the
// checkpoints after it turn as usual; a crash at each step loses nothing.
func TestAFailedCheckpointKeepsTheWritesAfterTheTurn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := mustOpen(t, path, Options{CheckpointInterval: time.Hour, CheckpointEvents: 1 << 30})
	repair := failCheckpointsOf(t, s, "/x")
	mustCreateInternal(t, s, "/a", []byte("1"))
	mustCreateInternal(t, s, "/x", []byte("2"))
	first := s.wal.active
	if err := s.flush(); err == nil {
		t.Fatal("flush succeeded with a bucket where /x goes")
	}
	mustCreateInternal(t, s, "/b", []byte("3"))
	if s.wal.active == first {
		t.Fatalf("after the failed checkpoint the writer is in file %d, want the other", first)
	}
	if got := keysOf(t, openRepairedCopy(t, path, "/x")); got != "[/a /b /x]" {
		t.Errorf("after a crash following a failed checkpoint, keys = %s", got)
	}
	repair()
	mustFlush(t, s)
	if s.wal.active == first {
		t.Errorf("the retry turned the writer back to file %d", first)
	}
	mustCreateInternal(t, s, "/c", []byte("4"))
	if got := keysOf(t, mustOpen(t, CrashCopy(t, path), Options{})); got != "[/a /b /c /x]" {
		t.Errorf("after a crash following the retry, keys = %s", got)
	}
	mustFlush(t, s)
	if s.wal.active != first {
		t.Errorf("the checkpoint after the retry left the writer in file %d, want %d", s.wal.active, first)
	}
	mustCreateInternal(t, s, "/d", []byte("5"))
	if got := keysOf(t, mustOpen(t, CrashCopy(t, path), Options{})); got != "[/a /b /c /d /x]" {
		t.Errorf("after a crash following the next checkpoint, keys = %s", got)
	}
}

// openRepairedCopy opens a crash copy of the store at path after removing
// the bucket failCheckpointsOf put at key.
func openRepairedCopy(t *testing.T, path, key string) *Store {
	t.Helper()
	copied := CrashCopy(t, path)
	db, err := bbolt.Open(copied, 0o600, &bbolt.Options{NoFreelistSync: true, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketKV).DeleteBucket([]byte(key)) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return mustOpen(t, copied, Options{})
}
