package server

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// BenchmarkCreateConfigMap_Watched is the raw-client create load of
// BenchmarkCreateConfigMap_8RawClients while watchers (each on its own
// connection) watch the namespace; it reports creates/s, the server's CPU
// per create (which includes sending the event to every watcher) and the
// events watchers missed (must be 0).
func BenchmarkCreateConfigMap_Watched(b *testing.B) {
	for _, watchers := range []int{0, 100, 500} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			s := startForBench(b, "memory")
			cfg, err := clientcmd.BuildConfigFromFlags("", s.KubeconfigPath)
			if err != nil {
				b.Fatal(err)
			}
			tlsCfg, err := rest.TLSConfigFor(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var received atomic.Int64
			var wg sync.WaitGroup
			for i := 0; i < watchers; i++ {
				client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg.Clone(), ForceAttemptHTTP2: true}}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1", nil)
				resp, err := client.Do(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("watch %d: %v %v", i, err, resp)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer resp.Body.Close()
					sc := bufio.NewScanner(resp.Body)
					sc.Buffer(make([]byte, 64<<10), 1<<20)
					for sc.Scan() {
						if strings.Contains(sc.Text(), `"name":"cm-`) {
							received.Add(1)
						}
					}
				}()
			}
			client, err := rest.HTTPClientFor(cfg)
			if err != nil {
				b.Fatal(err)
			}
			url := s.URL + "/api/v1/namespaces/default/configmaps"
			var n atomic.Int64
			b.SetParallelism(4)
			cpu0 := processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if !postConfigMap(b, client, url, n.Add(1)) {
						return
					}
				}

			})
			elapsed := b.Elapsed()
			want := int64(watchers) * n.Load()
			for deadline := time.Now().Add(time.Minute); received.Load() < want && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			cpu := processCPU() - cpu0
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/create")
			b.ReportMetric(float64(want-received.Load()), "missed-events")
			cancel()
			wg.Wait()
		})
	}
}
