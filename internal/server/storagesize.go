package server

import (
	"context"
	"math/rand/v2"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/admitd/admitd/internal/storage/etcd"
	"github.com/admitd/admitd/internal/storage/kubelayout"
	"github.com/admitd/admitd/pkg/storage"
)

// storageSizeDesc is kube-apiserver's apiserver_storage_size_bytes, one
// series per storage cluster ("etcd-0" for --etcd-servers; admitd has no
// overrides, so no other).
var storageSizeDesc = prometheus.NewDesc("apiserver_storage_size_bytes",
	"[STABLE] Size of the storage database file physically allocated in bytes.", []string{"storage_cluster_id"}, nil)

// storageSize measures the database when /metrics is scraped, as
// upstream's collector asks etcd then: etcd's reported database size, or
// the embedded store's file size. The memory store has no file and no
// series.
type storageSize struct {
	measure func(context.Context) (int64, error)
}

func newStorageSize(o Options, store storage.Store) *storageSize {
	if k, ok := store.(*kubelayout.Store); ok {
		store = k.Inner()
	}
	if s, ok := store.(*etcd.Store); ok {
		return &storageSize{measure: func(ctx context.Context) (int64, error) {
			eps := s.Client().Endpoints()
			status, err := s.Client().Status(ctx, eps[rand.IntN(len(eps))])
			if err != nil {
				return 0, err
			}
			return status.DbSize, nil
		}}
	}
	if o.Storage == "memory" {
		return &storageSize{}
	}
	path := boltPath(o)
	return &storageSize{measure: func(context.Context) (int64, error) {
		fi, err := os.Stat(path)
		if err != nil {
			return 0, err
		}
		return fi.Size(), nil
	}}
}

func (s *storageSize) Describe(ch chan<- *prometheus.Desc) { ch <- storageSizeDesc }

// Collect sends the size, or nothing when it cannot be measured within
// upstream's second.
func (s *storageSize) Collect(ch chan<- prometheus.Metric) {
	if s.measure == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	size, err := s.measure(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(storageSizeDesc, prometheus.GaugeValue, float64(size), "etcd-0")
}
