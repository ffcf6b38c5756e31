package etcd_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/admitd/admitd/test/etcd/etcdtest"
)

// BenchmarkCreateConfigMapOnEtcd_8RawClients posts small ConfigMaps from 8
// concurrent clients (one HTTP/2 connection) to admitd over a one-member
// etcd in the same process. cpu-µs/create counts both admitd's and etcd's
// CPU: compare runs of the same etcd, with benchstat.
func BenchmarkCreateConfigMapOnEtcd_8RawClients(b *testing.B) {
	c := etcdtest.Start(b, 1)
	cfg, _ := startServer(b, c.Endpoints(), 0)
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	url := cfg.Host + "/api/v1/namespaces/default/configmaps"
	var n atomic.Int64
	b.SetParallelism(4) // 2 cores × 4 = 8 clients
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"},"data":{"k":"v"}}`, n.Add(1))
			resp, err := client.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Errorf("create = %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/create")
}

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
