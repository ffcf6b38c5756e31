package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/etcd"
	"github.com/admitd/admitd/internal/storage/kubelayout"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// DefaultEtcdPrefix is kube-apiserver's --etcd-prefix default.
const DefaultEtcdPrefix = "/registry"

// EtcdOptions are kube-apiserver's etcd flags.
type EtcdOptions struct {
	// Servers are the etcd client URLs (--etcd-servers); none: no etcd.
	Servers []string
	// Prefix of every key (--etcd-prefix); "" means DefaultEtcdPrefix.
	Prefix string
	// CAFile, CertFile and KeyFile secure the etcd connection.
	CAFile, CertFile, KeyFile string
	// HealthcheckTimeout bounds the storage probe of the health endpoints'
	// "etcd" check, ReadycheckTimeout that of /readyz's "etcd-readiness"
	// (--etcd-healthcheck-timeout, --etcd-readycheck-timeout); 0 means
	// DefaultStorageCheckTimeout. They apply to the embedded store too.
	HealthcheckTimeout, ReadycheckTimeout time.Duration
	// CountMetricPollPeriod is how often the objects of each resource are
	// counted for apiserver_resource_objects
	// (--etcd-count-metric-poll-period); 0 or less: never. It applies to
	// the embedded store too.
	CountMetricPollPeriod time.Duration
}

// openEtcd opens the etcd store in kube-apiserver's layout (keys and
// encodings, kubelayout): layout's /registry root becomes the configured
// prefix, and resourceVersions are etcd's revisions.
func openEtcd(o Options) (storage.Store, storageProbe, error) {
	if o.Storage == "memory" {
		return nil, nil, fmt.Errorf("--etcd-servers and --storage=memory are exclusive")
	}
	prefix := strings.TrimSuffix(o.Etcd.Prefix, "/")
	if o.Etcd.Prefix == "" {
		prefix = DefaultEtcdPrefix
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := etcd.Open(ctx, etcd.Config{Endpoints: o.Etcd.Servers, Prefix: prefix,
		Root:   strings.TrimSuffix(layout.Root, "/"),
		CAFile: o.Etcd.CAFile, CertFile: o.Etcd.CertFile, KeyFile: o.Etcd.KeyFile})
	if err != nil {
		return nil, nil, err
	}
	return kubelayout.New(store, registry.NewCatalogue().Resources()), probeOf(store), nil
}

// runCompactor compacts the store every interval: etcd as kube-apiserver
// does (coordinated through compact_rev_key with every other server on the
// same etcd), the embedded stores with the compactor of compactor.go.
// reading is the oldest revision this server's lists are still reading.
func runCompactor(ctx context.Context, store storage.Store, interval time.Duration, log *slog.Logger, reading func() int64) {
	if k, ok := store.(*kubelayout.Store); ok {
		store = k.Inner()
	}
	if s, ok := store.(*etcd.Store); ok {
		s.RunCompactor(ctx, interval, log)
		return
	}
	(&compactor{store: store, log: log, reading: reading}).run(ctx, interval)
}
