package controllers

import (
	"context"
	"sync"

	"k8s.io/client-go/util/workqueue"
)

// ShutDowner is the part of a work queue RunWorkers needs.
type ShutDowner interface{ ShutDown() }

// RunWorkers runs a queue-driven controller's workers: once every cache in
// synced has synced it starts workers goroutines that call processNext
// until it returns false (the queue is shut down); when ctx ends it shuts
// the queue down and returns after the workers have. If ctx ends before
// the caches sync, no worker starts.
func RunWorkers(ctx context.Context, queue ShutDowner, synced []<-chan struct{}, workers int, processNext func(context.Context) bool) {
	defer queue.ShutDown()
	for _, s := range synced {
		select {
		case <-ctx.Done():
			return
		case <-s:
		}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
}

var _ ShutDowner = workqueue.TypedRateLimitingInterface[string](nil)
