package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/admitd/admitd/pkg/admission"
)

// evaluationTimeout is how long a request waits for its quota decision.
const evaluationTimeout = 10 * time.Second

// errUndecided is a waiter's result until its batch decides it: refused.
var errUndecided = errors.New("DEFAULT DENY")

// waiter is one request waiting for its namespace's batch.
type waiter struct {
	attrs  *admission.Attributes
	done   chan struct{}
	result error
}

// batcher collects the requests of each namespace: the first request of a
// namespace drains its queue batch after batch until its own request is
// decided, then hands what is left to a goroutine. Requests arriving while
// a batch runs form the next batch.
type batcher struct {
	eval func(ctx context.Context, ns string, ws []*waiter)

	mu      sync.Mutex
	pending map[string][]*waiter
	running map[string]bool
}

func newBatcher(eval func(ctx context.Context, ns string, ws []*waiter)) *batcher {
	return &batcher{eval: eval, pending: map[string][]*waiter{}, running: map[string]bool{}}
}

// wait queues the request and returns its decision.
func (b *batcher) wait(ctx context.Context, a *admission.Attributes) error {
	w := &waiter{attrs: a, done: make(chan struct{}), result: errUndecided}
	ns := a.Namespace
	b.mu.Lock()
	b.pending[ns] = append(b.pending[ns], w)
	lead := !b.running[ns]
	b.running[ns] = true
	b.mu.Unlock()
	if lead {
		b.drain(context.WithoutCancel(ctx), ns, w)
		if isDone(w) { // as it is when drain returns: no timer needed
			return w.result
		}
	}
	timer := time.NewTimer(evaluationTimeout)
	defer timer.Stop()
	select {
	case <-w.done:
		return w.result
	case <-timer.C:
		return apierrors.NewInternalError(fmt.Errorf("resource quota evaluation timed out"))
	}
}

// drain runs batches of ns until own is decided (nil: until the queue is
// empty), then leaves the rest to a goroutine.
func (b *batcher) drain(ctx context.Context, ns string, own *waiter) {
	for {
		b.mu.Lock()
		ws := b.pending[ns]
		delete(b.pending, ns)
		if len(ws) == 0 {
			delete(b.running, ns)
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.run(ctx, ns, ws)
		if own != nil && isDone(own) {
			b.mu.Lock()
			if len(b.pending[ns]) == 0 {
				delete(b.running, ns)
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
			go b.drain(ctx, ns, nil)
			return
		}
	}
}

// run decides one batch; every waiter is released, with an internal
// error if eval panics.
func (b *batcher) run(ctx context.Context, ns string, ws []*waiter) {
	defer func() {
		if r := recover(); r != nil {
			for _, w := range ws {
				w.result = apierrors.NewInternalError(fmt.Errorf("resource quota evaluation failed: %v", r))
			}
		}
		for _, w := range ws {
			close(w.done)
		}
	}()
	b.eval(ctx, ns, ws)
}

func isDone(w *waiter) bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}
