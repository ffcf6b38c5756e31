package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// BenchmarkListConfigMaps_5000 lists a namespace of 5,000 ConfigMaps
// (~460 bytes each) from 8 concurrent raw clients, on each storage: the
// list path of issue 25's (a), without APF in the way (the admin is
// exempt). It reports lists/s and the server process's CPU per list.
func BenchmarkListConfigMaps_5000(b *testing.B) {
	for _, storage := range []string{"bolt", "memory"} {
		b.Run(storage, func(b *testing.B) {
			s := startForBench(b, storage)
			cfg, err := clientcmd.BuildConfigFromFlags("", s.KubeconfigPath)
			if err != nil {
				b.Fatal(err)
			}
			client, err := rest.HTTPClientFor(cfg)
			if err != nil {
				b.Fatal(err)
			}
			url := s.URL + "/api/v1/namespaces/default/configmaps"
			payload := strings.Repeat("x", 300)
			for i := 0; i < 5000; i++ {
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%05d","labels":{"app":"bench"}},"data":{"payload":%q}}`, i, payload)
				resp, err := client.Post(url, "application/json", strings.NewReader(body))
				if err != nil || resp.StatusCode != http.StatusCreated {
					b.Fatalf("create %d: %v %v", i, err, resp)
				}
				resp.Body.Close()
			}
			var bytes atomic.Int64
			b.SetParallelism(4)
			cpu0 := processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := client.Get(url)
					if err != nil {
						b.Error(err)
						return
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("list = %d", resp.StatusCode)
						return
					}
					bytes.Add(n)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lists/s")
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N)/1000, "cpu-ms/list")
			b.ReportMetric(float64(bytes.Load())/float64(b.N), "bytes/list")
		})
	}
}
