package bolt

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/admitd/admitd/pkg/storage"
)

// Writes are acknowledged while a checkpoint waits for the data file (here
// held by another write transaction): the writer has turned to the second
// log file. A crash then recovers the first file's records in the current
// epoch and the second's in the next; once the data file is free, the
// checkpoint ends and a later one takes the rest.
func TestWritesGoOnWhileACheckpointRuns(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := mustOpen(t, path, Options{CheckpointInterval: time.Hour, CheckpointEvents: 2})
	held, release := make(chan struct{}), make(chan struct{})
	holderDone := make(chan error, 1)
	go func() {
		holderDone <- s.db.Update(func(*bbolt.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	mustCreateInternal(t, s, "/a", []byte("1"))
	mustCreateInternal(t, s, "/b", []byte("2")) // a checkpoint starts, and waits for the data file
	for i := range 5 {
		created := make(chan error, 1)
		go func() {
			_, err := s.Create(ctx, fmt.Sprintf("/during/%d", i), []byte("x"))
			created <- err
		}()
		select {
		case err := <-created:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			close(release)
			t.Fatalf("create %d while the checkpoint waits was not acknowledged", i)
		}
	}
	copied := mustOpen(t, CrashCopy(t, path), Options{})
	if got := keysOf(t, copied); got != "[/a /b /during/0 /during/1 /during/2 /during/3 /during/4]" {
		t.Errorf("after a crash during the checkpoint, keys = %s", got)
	}
	close(release)
	if err := <-holderDone; err != nil {
		t.Fatal(err)
	}
	mustFlush(t, s)
	if n, _ := s.overlay.size(); n != 0 {
		t.Errorf("%d changes pending after the checkpoints, want none", n)
	}
	if rev, _ := s.Revision(ctx); rev != 7 {
		t.Errorf("Revision() = %d, want 7", rev)
	}
	again := mustOpen(t, CrashCopy(t, path), Options{})
	if got := keysOf(t, again); got != "[/a /b /during/0 /during/1 /during/2 /during/3 /during/4]" {
		t.Errorf("after a crash once checkpointed, keys = %s", got)
	}
}

func keysOf(t *testing.T, s *Store) string {
	t.Helper()
	res, err := s.List(t.Context(), "/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range res.Items {
		keys = append(keys, kv.Key)
	}
	return fmt.Sprint(keys)
}

// recoverRecords takes the current epoch's records from whichever file
// holds them, then the next epoch's from the other, and refuses what
// cannot be the log of acknowledged writes.
func TestRecoverRecords(t *testing.T) {
	const cur, next, stale = 11, 22, 33
	rec := func(epoch uint64, revs ...int64) []byte {
		var out []byte
		for _, r := range revs {
			out = append(out, encodeWALRecord(epoch, r, []storage.Event{{Type: storage.EventPut,
				KV: storage.KeyValue{Key: fmt.Sprintf("/k%d", r), Value: []byte("v"), CreateRevision: r, ModRevision: r}}})...)
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		files      [2][]byte
		base       int64
		next       uint64
		want       []int64
		wantGapErr string
	}{
		{name: "current in the first", files: [2][]byte{rec(cur, 5, 6), nil}, base: 4, next: next, want: []int64{5, 6}},
		{name: "current in the second, next in the first", files: [2][]byte{rec(next, 7, 8), rec(cur, 5, 6)}, base: 4, next: next, want: []int64{5, 6, 7, 8}},
		{name: "records the file holds are skipped", files: [2][]byte{rec(cur, 3, 4, 5), rec(next, 6)}, base: 4, next: next, want: []int64{5, 6}},
		{name: "only next's (the turn came before any record of cur)", files: [2][]byte{rec(stale, 1, 2), rec(next, 5)}, base: 4, next: next, want: []int64{5}},
		{name: "stale records past the current ones end them", files: [2][]byte{append(rec(cur, 5), rec(stale, 6)...), nil}, base: 4, next: next, want: []int64{5}},
		{name: "no next epoch (an older data file)", files: [2][]byte{rec(cur, 5), rec(next, 6)}, base: 4, want: []int64{5}},
		{name: "a gap between the files", files: [2][]byte{rec(cur, 5), rec(next, 7)}, base: 4, next: next, wantGapErr: "revision 7 follows 5"},
		{name: "a gap after the data file", files: [2][]byte{rec(cur, 6), nil}, base: 4, next: next, wantGapErr: "starts at revision 6, the file is at 4"},
		{name: "one epoch in both files", files: [2][]byte{rec(cur, 5), rec(cur, 6)}, base: 4, next: next, wantGapErr: "both files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events, err := recoverRecords(tc.files, tc.base, cur, tc.next)
			if tc.wantGapErr != "" {
				if !errors.Is(err, errWALGap) || !strings.Contains(err.Error(), tc.wantGapErr) {
					t.Fatalf("recoverRecords = %v, want a gap error naming %q", err, tc.wantGapErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var revs []int64
			for _, ev := range events {
				revs = append(revs, ev.KV.ModRevision)
			}
			if !slices.Equal(revs, tc.want) {
				t.Errorf("recovered revisions %v, want %v", revs, tc.want)
			}
		})
	}
}

// A data file of an earlier version names no next epoch: its first
// checkpoint is made in place, with the writes waiting, and picks both
// epochs; the ones after it turn as usual. Every write survives a crash
// at each step.
func TestADataFileWithoutANextEpochCheckpointsInPlaceFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := mustOpen(t, path, Options{CheckpointInterval: time.Hour, CheckpointEvents: 1 << 30})
	if err := s.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Delete(metaWALNext) }); err != nil {
		t.Fatal(err)
	}
	s.epochs.next = 0 // as Open would have read it; the writer is idle
	mustCreateInternal(t, s, "/a", []byte("1"))
	first := s.wal.active
	mustFlush(t, s)
	if s.wal.active != first || s.epochs.next == 0 || s.wal.epoch() != s.epochs.cur {
		t.Fatalf("after the first checkpoint: file %d (was %d), epochs %+v, writing in %d; want the same file, in the new current epoch, and a next one",
			s.wal.active, first, s.epochs, s.wal.epoch())
	}
	mustCreateInternal(t, s, "/b", []byte("2"))
	copied := mustOpen(t, CrashCopy(t, path), Options{})
	if got := keysOf(t, copied); got != "[/a /b]" {
		t.Errorf("after a crash, keys = %s", got)
	}
	mustFlush(t, s)
	if s.wal.active == first {
		t.Errorf("the second checkpoint left the writer in file %d, want the other", first)
	}
	mustCreateInternal(t, s, "/c", []byte("3"))
	again := mustOpen(t, CrashCopy(t, path), Options{})
	if got := keysOf(t, again); got != "[/a /b /c]" {
		t.Errorf("after a crash, keys = %s", got)
	}
}
