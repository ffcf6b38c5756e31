package audit

import (
	"context"
	"sync"

	"github.com/admitd/admitd/internal/evaluate"
)

// pipeline evaluates objects on several workers and hands their outcomes
// to apply in the order the objects were submitted, so that the report
// is the one a single worker makes. At most window objects are submitted
// and not yet applied: memory does not grow with the number of objects.
//
// Two objects are never evaluated at the same time when they share a
// claim (their name, or a Service's cluster IP), and an object that is
// not independent (what admission reads: namespaces, LimitRanges,
// quotas, params, …) is evaluated alone, after every object before it
// and before any after it, as one worker would.
type pipeline struct {
	ctx      context.Context
	cancel   context.CancelFunc
	evaluate func(context.Context, task) outcome
	apply    func(task, outcome) error

	work    chan *job
	order   chan *job
	workers sync.WaitGroup
	// running counts the jobs handed to the workers and not finished.
	running sync.WaitGroup
	// claims are the claims of the jobs running, with their job's end.
	mu     sync.Mutex
	claims map[string]chan struct{}

	collected chan error
}

// task is one object to evaluate, with what it claims; alone when it
// must be evaluated with nothing else.
type task struct {
	obj    evaluate.Object
	claims []string
	alone  bool
}

type job struct {
	task task
	out  outcome
	done chan struct{}
}

// newPipeline starts workers; window bounds the jobs submitted and not
// applied.
func newPipeline(ctx context.Context, workers, window int, eval func(context.Context, task) outcome,
	apply func(task, outcome) error) *pipeline {
	ctx, cancel := context.WithCancel(ctx)
	p := &pipeline{ctx: ctx, cancel: cancel, evaluate: eval, apply: apply,
		work: make(chan *job), order: make(chan *job, window), claims: map[string]chan struct{}{},
		collected: make(chan error, 1)}
	for range workers {
		p.workers.Add(1)
		go p.worker()
	}
	go p.collect()
	return p
}

func (p *pipeline) worker() {
	defer p.workers.Done()
	for j := range p.work {
		if p.ctx.Err() == nil {
			j.out = p.evaluate(p.ctx, j.task)
		} else {
			j.out = outcome{err: p.ctx.Err()}
		}
		p.release(j)
		close(j.done)
		p.running.Done()
	}
}

// collect applies the outcomes in order; the first error stops it and
// cancels what is running.
func (p *pipeline) collect() {
	var err error
	for j := range p.order {
		<-j.done
		if err != nil {
			continue
		}
		if err = j.out.err; err == nil {
			err = p.apply(j.task, j.out)
		}
		if err != nil {
			p.cancel()
		}
	}
	p.collected <- err
}

// submit queues t after the objects before it; it waits while the window
// is full, while t shares a claim with an object running, and, for an
// object evaluated alone, until everything before it has finished.
func (p *pipeline) submit(t task) error {
	if err := p.ctx.Err(); err != nil {
		return err
	}
	if t.alone {
		p.running.Wait()
	}
	for _, c := range t.claims {
		if err := p.awaitClaim(c); err != nil {
			return err
		}
	}
	j := &job{task: t, done: make(chan struct{})}
	p.hold(j)
	select {
	case p.order <- j:
	case <-p.ctx.Done():
		return p.ctx.Err()
	}
	p.running.Add(1)
	p.work <- j
	if t.alone {
		p.running.Wait()
	}
	return nil
}

// awaitClaim waits until no running object holds claim c.
func (p *pipeline) awaitClaim(c string) error {
	p.mu.Lock()
	done, ok := p.claims[c]
	p.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-p.ctx.Done():
		return p.ctx.Err()
	}
}

func (p *pipeline) hold(j *job) {
	p.mu.Lock()
	for _, c := range j.task.claims {
		p.claims[c] = j.done
	}
	p.mu.Unlock()
}

func (p *pipeline) release(j *job) {
	p.mu.Lock()
	for _, c := range j.task.claims {
		if p.claims[c] == j.done {
			delete(p.claims, c)
		}
	}
	p.mu.Unlock()
}

// close waits for every object submitted and returns the first error in
// submission order (or the context's).
func (p *pipeline) close() error {
	close(p.work)
	p.workers.Wait()
	close(p.order)
	err := <-p.collected
	p.cancel()
	return err
}
