package controllers

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// drain is a ProcessNext that counts the items of q it takes.
func drain(q workqueue.TypedInterface[string], done *atomic.Int32) func(context.Context) bool {
	return func(context.Context) bool {
		item, quit := q.Get()
		if quit {
			return false
		}
		done.Add(1)
		q.Done(item)
		return true
	}
}

func TestRunWorkerPoolsDrainsEveryQueueAndStopsWithTheContext(t *testing.T) {
	jobs, orphans := workqueue.NewTyped[string](), workqueue.NewTyped[string]()
	var jobsDone, orphansDone, sweeps atomic.Int32
	synced := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() {
		RunWorkerPools(ctx, []<-chan struct{}{synced},
			WorkerPool{Queue: jobs, Workers: 2, ProcessNext: drain(jobs, &jobsDone)},
			WorkerPool{Queue: orphans, Workers: 1, ProcessNext: drain(orphans, &orphansDone)},
			WorkerPool{Workers: 1, ProcessNext: func(context.Context) bool { sweeps.Add(1); return false }})
		close(returned)
	}()
	jobs.Add("a")
	orphans.Add("b")
	orphans.Add("c")
	time.Sleep(50 * time.Millisecond)
	if n := jobsDone.Load() + orphansDone.Load() + sweeps.Load(); n != 0 {
		t.Fatalf("%d items processed before the caches synced, want 0", n)
	}
	close(synced)
	for deadline := time.Now().Add(5 * time.Second); jobsDone.Load() != 1 || orphansDone.Load() != 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processed %d jobs and %d orphans, want 1 and 2", jobsDone.Load(), orphansDone.Load())
		}
	}
	cancel()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("RunWorkerPools did not return after its context ended")
	}
	if !jobs.ShuttingDown() || !orphans.ShuttingDown() {
		t.Errorf("queues shutting down: jobs %t, orphans %t; want both", jobs.ShuttingDown(), orphans.ShuttingDown())
	}
	if n := sweeps.Load(); n != 1 {
		t.Errorf("the queueless pool ran %d times, want 1", n)
	}
}

func TestRunWorkerPoolsStartsNoWorkerWhenTheContextEndsFirst(t *testing.T) {
	q := workqueue.NewTyped[string]()
	q.Add("a")
	var done atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	RunWorkerPools(ctx, []<-chan struct{}{make(chan struct{})}, WorkerPool{Queue: q, Workers: 3, ProcessNext: drain(q, &done)})
	if done.Load() != 0 || !q.ShuttingDown() {
		t.Errorf("processed %d, queue shutting down %t; want 0 and true", done.Load(), q.ShuttingDown())
	}
}

// A key whose sync keeps failing is retried Max times, then dropped (and
// forgotten) until it is queued again; one that syncs is forgotten.
func TestProcessNextWithRetries(t *testing.T) {
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](0, 0))
	defer queue.ShutDown()
	syncs := map[string]int{}
	sync := func(_ context.Context, key string) error {
		syncs[key]++
		if key == "bad" {
			return errors.New("refused")
		}
		return nil
	}
	var logs bytes.Buffer
	r := Retries{Max: 3, Retry: "will retry", Drop: "dropped", Log: slog.New(slog.NewTextHandler(&logs, nil))}
	queue.Add("bad")
	queue.Add("good")
	for queue.Len() > 0 {
		if !ProcessNextWithRetries(t.Context(), queue, sync, r) {
			t.Fatal("the queue shut down")
		}
		// AddRateLimited with no delay still goes through the delaying
		// queue's goroutine.
		for deadline := time.Now().Add(time.Second); queue.Len() == 0 && syncs["bad"] <= r.Max && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	if syncs["bad"] != 4 || syncs["good"] != 1 {
		t.Errorf("syncs = %v, want bad 4 (the first and 3 retries), good 1", syncs)
	}
	if n := queue.NumRequeues("bad"); n != 0 {
		t.Errorf("NumRequeues(bad) = %d after the drop, want 0 (forgotten)", n)
	}
	if got := strings.Count(logs.String(), "will retry"); got != 3 || strings.Count(logs.String(), "dropped") != 1 {
		t.Errorf("logs: %d retries and %d drops, want 3 and 1:\n%s", got, strings.Count(logs.String(), "dropped"), logs.String())
	}
}
