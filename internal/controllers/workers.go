package controllers

import (
	"context"
	"log/slog"
	"sync"

	"k8s.io/client-go/util/workqueue"
)

// ShutDowner is the part of a work queue RunWorkers needs.
type ShutDowner interface{ ShutDown() }

// WorkerPool is a number of goroutines that each call ProcessNext until it
// returns false. Queue, when not nil, is the work queue they drain: it is
// shut down when the pool's context ends, which makes ProcessNext return
// false once the queue is empty. A pool without a queue runs ProcessNext
// for work that needs the caches synced but no queue (a periodic clean-up
// that returns when the context ends, a one-off sweep that returns false
// at once).
type WorkerPool struct {
	Queue       ShutDowner
	Workers     int
	ProcessNext func(context.Context) bool
}

// RunWorkers runs a queue-driven controller's workers: once every cache in
// synced has synced it starts workers goroutines that call processNext
// until it returns false (the queue is shut down); when ctx ends it shuts
// the queue down and returns after the workers have. If ctx ends before
// the caches sync, no worker starts.
func RunWorkers(ctx context.Context, queue ShutDowner, synced []<-chan struct{}, workers int, processNext func(context.Context) bool) {
	RunWorkerPools(ctx, synced, WorkerPool{Queue: queue, Workers: workers, ProcessNext: processNext})
}

// RunWorkerPools is RunWorkers for a controller with several queues (or
// background loops): once every cache in synced has synced it starts every
// pool's workers; when ctx ends it shuts every queue down and returns
// after all workers have. If ctx ends before the caches sync, no worker
// starts; the queues are shut down either way.
func RunWorkerPools(ctx context.Context, synced []<-chan struct{}, pools ...WorkerPool) {
	shutDown := func() {
		for _, p := range pools {
			if p.Queue != nil {
				p.Queue.ShutDown()
			}
		}
	}
	defer shutDown()
	for _, s := range synced {
		select {
		case <-ctx.Done():
			return
		case <-s:
		}
	}
	var wg sync.WaitGroup
	for _, p := range pools {
		for range p.Workers {
			wg.Go(func() {
				parkWithReserve(func() {
					for p.ProcessNext(ctx) {
					}
				})
			})
		}
	}
	<-ctx.Done()
	shutDown()
	wg.Wait()
}

var _ ShutDowner = workqueue.TypedRateLimitingInterface[string](nil)

// Retries is how a controller retries a key whose sync failed: up to Max
// times, rate-limited, logging Retry at info level each time, then the key
// is dropped until something queues it again, logging Drop as a warning
// (the endpoint controllers' maxRetries of kube-controller-manager).
type Retries struct {
	Max         int
	Retry, Drop string
	Log         *slog.Logger
}

// ProcessNextWithRetries syncs one key of queue with sync, returning false
// once the queue is shut down: a key that syncs is forgotten, one that
// fails while ctx lives is retried as r says.
func ProcessNextWithRetries(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) error, r Retries) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	err := sync(ctx, key)
	switch {
	case err == nil:
		queue.Forget(key)
	case ctx.Err() != nil:
	case queue.NumRequeues(key) < r.Max:
		r.Log.Info(r.Retry, "key", key, "err", err)
		queue.AddRateLimited(key)
	default:
		r.Log.Warn(r.Drop, "key", key, "err", err)
		queue.Forget(key)
	}
	return true
}
