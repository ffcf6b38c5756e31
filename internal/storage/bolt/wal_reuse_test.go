package bolt_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/storage/bolt"
	"github.com/admitd/admitd/pkg/storage"
)

// The log files are rewound instead of truncated: each checkpoint turns the
// writer to the other file, whose new records overwrite the old ones, and
// the old ones past them are stale. A crash copy recovers exactly the new
// records.
func TestOpenAfterACheckpointIgnoresStaleRecords(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := open(t, path, bolt.Options{CheckpointEvents: 1 << 30, CheckpointInterval: time.Hour})
	big := strings.Repeat("x", 20<<10)
	for i := range 3 {
		mustCreate(t, s, fmt.Sprintf("/big/%d", i), big)
	}
	checkpoint(t, s) // the writer turns to the second file
	mustCreate(t, s, "/mid", "m")
	checkpoint(t, s)                   // and back to the first
	mustCreate(t, s, "/small/0", "s0") // written over the first big record
	mustCreate(t, s, "/small/1", "s1")
	if _, err := s.Update(ctx, "/big/1", []byte("shrunk"), 2); err != nil {
		t.Fatal(err)
	}
	copyPath := crashCopy(t, path)
	if fi, err := os.Stat(copyPath + ".wal"); err != nil || fi.Size() < 3*20<<10 {
		t.Fatalf("log after a checkpoint = %v, %v; want it to keep its %d bytes of stale records", fi.Size(), err, 3*20<<10)
	}
	copied := open(t, copyPath, bolt.Options{})
	if rev, _ := copied.Revision(ctx); rev != 7 {
		t.Fatalf("Revision() = %d, want 7", rev)
	}
	got, err := copied.List(ctx, "/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint([]string{"/big/0=" + big + "@1", "/big/1=shrunk@7", "/big/2=" + big + "@3", "/mid=m@4", "/small/0=s0@5", "/small/1=s1@6"})
	if fmt.Sprint(kvStrings(got.Items)) != want {
		t.Errorf("List after recovery = %.200v, want %.200v", kvStrings(got.Items), want)
	}
	// Recovery rewinds too: writes after it survive another crash, and the
	// records of before the first crash do not come back.
	mustCreate(t, copied, "/after", "a")
	again := open(t, crashCopy(t, copyPath), bolt.Options{})
	if kv, err := again.Get(ctx, "/after"); err != nil || kv.ModRevision != 8 {
		t.Errorf("Get(/after) after a second recovery = %+v, %v; want revision 8", kv, err)
	}
	if kv, err := again.Get(ctx, "/big/1"); err != nil || string(kv.Value) != "shrunk" {
		t.Errorf("Get(/big/1) after a second recovery = %s, %v; want shrunk", kv.Value, err)
	}
}

// A clean shutdown empties the log, so that a new data file in the old
// one's place does not find stale records it would take for a gap.
func TestCloseEmptiesTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admitd.db")
	s, err := bolt.Open(path, bolt.Options{CheckpointEvents: 2, CheckpointInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustCreate(t, s, fmt.Sprintf("/k/%d", i), "v")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{".wal", ".wal2"} {
		if fi, err := os.Stat(path + suffix); err != nil || fi.Size() != 0 {
			t.Fatalf("log %s after Close = %v bytes, %v; want empty", suffix, fi.Size(), err)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	fresh, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("Open of a new data file next to a closed store's log = %v", err)
	}
	defer fresh.Close()
	if _, err := fresh.Get(t.Context(), "/k/0"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Get(/k/0) in a new data file = %v, want not found", err)
	}
}

// checkpoint moves every pending change into the data file (Compact at the
// current revision checkpoints first).
func checkpoint(t *testing.T, s *bolt.Store) {
	t.Helper()
	rev, err := s.Revision(t.Context())
	if err == nil {
		err = s.Compact(t.Context(), rev)
	}
	if err != nil {
		t.Fatal(err)
	}
}
