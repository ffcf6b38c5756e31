package etcd_test

import (
	"errors"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/storage/etcd"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/storagetest"
	"github.com/admitd/admitd/test/etcd/etcdtest"
)

// openStore opens a store over the members of c, with the revision offset
// that makes a new etcd a store at revision 0.
func openStore(t *testing.T, c *etcdtest.Cluster, prefix string) *etcd.Store {
	t.Helper()
	s, err := etcd.Open(t.Context(), etcd.Config{Endpoints: c.Endpoints(), Prefix: prefix, RevisionOffset: 1})
	if err != nil {
		t.Fatalf("etcd.Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestConformance runs the storage suite, each test on a new one-member
// etcd (the suite counts revisions from an empty store).
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return openStore(t, etcdtest.Start(t, 1), "/suite")
	})
}

// TestWatchProgress: a watcher's Progress follows writes outside its
// prefix through etcd's progress notifications.
func TestWatchProgress(t *testing.T) {
	s := openStore(t, etcdtest.Start(t, 1), "/p")
	w, err := s.Watch(t.Context(), "/a/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	kv, err := s.Create(t.Context(), "/b/x", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	progress := w.(*etcd.Watcher).Progress
	deadline := time.Now().Add(10 * time.Second)
	for progress() < kv.ModRevision {
		if time.Now().After(deadline) {
			t.Fatalf("Progress() = %d, want %d after a write outside the prefix", progress(), kv.ModRevision)
		}
		if err := s.RequestProgress(t.Context()); err != nil {
			t.Fatalf("RequestProgress: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case ev := <-w.Events():
		t.Errorf("event outside the prefix: %+v", ev)
	default:
	}
}

// A write over etcd's request bound (1.5 MiB by default) or the client's
// send limit (2 MiB) is storage.ErrTooLarge at once, not an outage to send
// again.
func TestWriteTooLarge(t *testing.T) {
	s := openStore(t, etcdtest.Start(t, 1), "/big")
	for _, n := range []int{1700 << 10, 2600 << 10} {
		_, err := s.Create(t.Context(), "/x", make([]byte, n))
		if !errors.Is(err, storage.ErrTooLarge) {
			t.Errorf("creating %d bytes: %v, want ErrTooLarge", n, err)
		}
	}
	if _, err := s.Create(t.Context(), "/x", make([]byte, 1<<20)); err != nil {
		t.Errorf("creating 1 MiB: %v", err)
	}
}
