package bolt_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/storage/bolt"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/fanout"
	"github.com/admitd/admitd/pkg/storage/storagetest"
)

func open(t testing.TB, path string, opts bolt.Options) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%q) error = %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return open(t, filepath.Join(t.TempDir(), "admitd.db"), bolt.Options{})
	})
}

// TestConformanceSmallBatches runs the suite with one write per transaction,
// so the batching code is not what makes it pass.
func TestConformanceSmallBatches(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return open(t, filepath.Join(t.TempDir(), "admitd.db"), bolt.Options{MaxBatchSize: 1})
	})
}

func TestReopenKeepsDataAndHistory(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := open(t, path, bolt.Options{})
	for i := range 5 {
		if _, err := s.Create(ctx, fmt.Sprintf("/k/%d", i), []byte("v1")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Update(ctx, "/k/1", []byte("v2"), 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Delete(ctx, "/k/2", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx, 3); err != nil {
		t.Fatal(err)
	}
	before, err := s.List(ctx, "", storage.ListOptions{Revision: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}

	s = open(t, path, bolt.Options{})
	if rev, err := s.Revision(ctx); rev != 7 || err != nil {
		t.Errorf("Revision() after reopen = %d, %v; want 7", rev, err)
	}
	if rev, err := s.CompactedRevision(ctx); rev != 3 || err != nil {
		t.Errorf("CompactedRevision() after reopen = %d, %v; want 3", rev, err)
	}
	if kv, err := s.Get(ctx, "/k/1"); err != nil || string(kv.Value) != "v2" || kv.CreateRevision != 2 || kv.ModRevision != 6 {
		t.Errorf("Get(/k/1) after reopen = %+v, %v; want v2 created at 2, modified at 6", kv, err)
	}
	if _, err := s.Get(ctx, "/k/2"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Get(/k/2) after reopen error = %v, want ErrNotFound", err)
	}
	after, err := s.List(ctx, "", storage.ListOptions{Revision: 5})
	if err != nil || fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("List at revision 5 after reopen = %v, %v; want %v", after, err, before)
	}
	w, err := s.Watch(ctx, "", 3)
	if err != nil {
		t.Fatalf("Watch(after 3) after reopen error = %v", err)
	}
	defer w.Stop()
	for want := int64(4); want <= 7; want++ {
		if ev := <-w.Events(); ev.KV.ModRevision != want {
			t.Errorf("replayed event at revision %d, want %d", ev.KV.ModRevision, want)
		}
	}
	kv, err := s.Create(ctx, "/k/new", nil)
	if err != nil || kv.ModRevision != 8 {
		t.Errorf("Create after reopen = revision %d, %v; want 8", kv.ModRevision, err)
	}
}

func TestOpenInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "admitd.db")
	open(t, path, bolt.Options{})
	start := time.Now()
	s, err := bolt.Open(path, bolt.Options{LockTimeout: 100 * time.Millisecond})
	if err == nil {
		_ = s.Close()
		t.Fatal("second Open of an open data file succeeded, want an error")
	}
	if !errors.Is(err, bolt.ErrInUse) || !strings.Contains(err.Error(), "in use by another admitd process") ||
		!strings.Contains(err.Error(), path) {
		t.Errorf("second Open error = %q, want ErrInUse naming %s", err, path)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("second Open took %s to fail, want about the lock timeout", d)
	}
}

func TestSlowWatcherIsEnded(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "admitd.db"), bolt.Options{WatchBufferSize: 4})
	w, err := s.Watch(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 { // never blocks, though nobody reads w
			if _, err := s.Create(ctx, fmt.Sprintf("/slow/%d", i), nil); err != nil {
				t.Errorf("Create error = %v", err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("writers blocked by a watcher that does not read")
	}
	n := 0
	for range w.Events() {
		n++
	}
	if !errors.Is(w.Err(), fanout.ErrTooSlow) || n >= 50 {
		t.Errorf("slow watcher got %d events, Err() = %v; want fewer than 50 and %v", n, w.Err(), fanout.ErrTooSlow)
	}
}

// BenchmarkCreate_Parallel measures durable creates of small values from 8
// concurrent clients (whatever GOMAXPROCS is), which share fsyncs.
func BenchmarkCreate_Parallel(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "admitd.db"), bolt.Options{})
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((8 + procs - 1) / procs)
	value := []byte(strings.Repeat("x", 100))
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Create(b.Context(), fmt.Sprintf("/bench/%d", n.Add(1)), value); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}

// BenchmarkCreate_Serial measures one client: every create waits for its
// own fsync.
func BenchmarkCreate_Serial(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "admitd.db"), bolt.Options{})
	value := []byte(strings.Repeat("x", 100))
	for i := 0; b.Loop(); i++ {
		if _, err := s.Create(b.Context(), fmt.Sprintf("/bench/%d", i), value); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}
