package etcd_test

import (
	"testing"

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
