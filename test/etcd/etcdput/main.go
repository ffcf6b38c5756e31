// Command etcdput measures etcd's own put rate (8 clients, one 300-byte
// value per put), the ceiling of any API server on that etcd; sidebyside.sh
// runs it next to ../shared/tools/loadgen.
package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

func main() {
	eps := flag.String("endpoints", "", "")
	count := flag.Int("count", 3000, "")
	flag.Parse()
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(*eps, ","), Logger: zap.NewNop()})
	if err != nil {
		panic(err)
	}
	defer cli.Close()
	val := strings.Repeat("x", 300)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			for i := range *count / 8 {
				if _, err := cli.Put(context.Background(), fmt.Sprintf("/bench/%d/%d", c, i), val); err != nil {
					panic(err)
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("etcd puts: %d in %s = %.0f/s\n", *count, time.Since(start).Round(time.Millisecond), float64(*count)/time.Since(start).Seconds())
}
