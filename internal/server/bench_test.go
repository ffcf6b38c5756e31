package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/transport"
)

func startForBench(b *testing.B, storage string) *Server {
	b.Helper()
	o := DefaultOptions()
	o.DataDir, o.SecurePort, o.Storage = b.TempDir(), 0, storage
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := Start(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkStartToReady measures Start (storage open, certificates,
// bootstrap, listener) on a fresh data directory, then on an existing one.
func BenchmarkStartToReady(b *testing.B) {
	for _, fresh := range []bool{true, false} {
		b.Run(fmt.Sprintf("fresh=%v", fresh), func(b *testing.B) {
			dir := b.TempDir()
			for i := 0; i < b.N; i++ {
				o := DefaultOptions()
				o.DataDir, o.SecurePort = dir, 0
				if fresh {
					o.DataDir = fmt.Sprintf("%s/%d", dir, i)
				}
				o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
				s, err := Start(context.Background(), o)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = s.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkCreateConfigMap_8Clients creates small ConfigMaps through the
// HTTPS API from 8 concurrent client-go clients (no webhooks).
func BenchmarkCreateConfigMap_8Clients(b *testing.B) {
	for _, storage := range []string{"bolt", "memory"} {
		b.Run(storage, func(b *testing.B) {
			s := startForBench(b, storage)
			cfg, err := clientcmd.BuildConfigFromFlags("", s.KubeconfigPath)
			if err != nil {
				b.Fatal(err)
			}
			cfg.QPS, cfg.Burst = -1, 0
			cs := kubernetes.NewForConfigOrDie(cfg)
			var n atomic.Int64
			b.SetParallelism(4) // 2 cores × 4 = 8 clients
			cpu0 := processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", n.Add(1))}, Data: map[string]string{"k": "v"}}
					if _, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/create")
			reportStartingStackSize(b)
		})
	}
}

// BenchmarkCreateConfigMap_8RawClients is the same load from a lean HTTP/2
// client posting pre-encoded JSON, so that the client's own cost (client-go
// encoding, decoding, throttling) does not share the 2 cores as much. The
// 8 clients share one connection.
func BenchmarkCreateConfigMap_8RawClients(b *testing.B) {
	benchRawCreates(b, func(cfg *rest.Config) (func() *http.Client, error) {
		client, err := rest.HTTPClientFor(cfg)
		return func() *http.Client { return client }, err
	})
}

// BenchmarkCreateConfigMap_8Connections is the raw-client load with each
// client on its own connection, as 8 separate processes would be, instead
// of 8 streams multiplexed on one HTTP/2 connection.
func BenchmarkCreateConfigMap_8Connections(b *testing.B) {
	benchRawCreates(b, func(cfg *rest.Config) (func() *http.Client, error) {
		tlsCfg, err := rest.TLSConfigFor(cfg)
		return func() *http.Client {
			var rt http.RoundTripper = &http.Transport{TLSClientConfig: tlsCfg.Clone(), ForceAttemptHTTP2: true}
			if cfg.BearerToken != "" {
				rt = transport.NewBearerAuthRoundTripper(cfg.BearerToken, rt)
			}
			return &http.Client{Transport: rt}
		}, err
	})
}

// benchRawCreates runs 8 clients posting ConfigMaps, on each storage; each
// client gets its HTTP client from the function clients returns.
func benchRawCreates(b *testing.B, clients func(*rest.Config) (func() *http.Client, error)) {
	for _, storage := range []string{"bolt", "memory"} {
		b.Run(storage, func(b *testing.B) {
			s := startForBench(b, storage)
			cfg, err := clientcmd.BuildConfigFromFlags("", s.KubeconfigPath)
			if err != nil {
				b.Fatal(err)
			}
			newClient, err := clients(cfg)
			if err != nil {
				b.Fatal(err)
			}
			url := s.URL + "/api/v1/namespaces/default/configmaps"
			var n atomic.Int64
			b.SetParallelism(4) // 2 cores × 4 = 8 clients
			cpu0 := processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				client := newClient()
				for pb.Next() {
					if !postConfigMap(b, client, url, n.Add(1)) {
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/create")
			reportStartingStackSize(b)
		})
	}
}

// postConfigMap creates ConfigMap cm-<i> with pre-encoded JSON; false
// (and the benchmark failed) when it was not created.
func postConfigMap(b *testing.B, client *http.Client, url string, i int64) bool {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"},"data":{"k":"v"}}`, i)
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		b.Error(err)
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		b.Errorf("create = %d", resp.StatusCode)
		return false
	}
	return true
}

// processCPU is the user+system CPU time this process has used: per create,
// a steadier measure than throughput on a noisy 2-core machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportStartingStackSize reports the size the runtime starts goroutines
// with, which the parked controller workers keep at 4 KiB (see
// internal/controllers/idlestack.go): at 2 KiB each create costs ~7% more.
func reportStartingStackSize(b *testing.B) {
	sample := []metrics.Sample{{Name: "/gc/stack/starting-size:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() == metrics.KindUint64 {
		b.ReportMetric(float64(sample[0].Value.Uint64()), "start-stack-B")
	}
}
