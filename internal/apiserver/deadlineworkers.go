package apiserver

import (
	"sync/atomic"
	"time"
)

// A request with a deadline is served on a goroutine of its own, so that
// the goroutine net/http called can end the response when the deadline
// passes (serveWithDeadline). Starting a goroutine per request costs its
// creation and, as the request's handler is deep, the growth of its stack
// from the runtime's starting size, copied once or more on every request.
// Instead a goroutine that served a run waits a while for the next one
// and serves it on the stack it already grew: a run is handed to an idle
// worker when there is one, else a worker is started for it. Which
// goroutine serves a run changes nothing else: the run still ends, is
// timed out and reports panics as it did on a goroutine of its own.

// workerIdle is how long a worker waits for another run before it exits.
const workerIdle = 10 * time.Second

// maxIdleWorkers bounds the workers waiting at once: one that ends a run
// while that many wait exits. Waiting workers are served in turn, so under
// a steady load every one of them stays; the bound keeps a burst of
// requests from leaving that many goroutines (and their stacks) behind.
const maxIdleWorkers = 64

// idleWorkers hands a run to a worker waiting for one; idleCount is about
// how many wait.
var (
	idleWorkers = make(chan *deadlineRun)
	idleCount   atomic.Int32
)

// startRun serves run on an idle worker, or on a new one.
func startRun(run *deadlineRun) {
	select {
	case idleWorkers <- run:
	default:
		go serveRuns(run)
	}
}

// serveRuns serves run, then any run handed to it, until it has waited
// workerIdle for one or enough other workers wait. It must not touch a run
// after that run's end was told (its done channel): the run may be in use
// again by then.
func serveRuns(run *deadlineRun) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		run.run()
		if idleCount.Add(1) > maxIdleWorkers {
			idleCount.Add(-1)
			return
		}
		idle.Reset(workerIdle)
		select {
		case run = <-idleWorkers:
			idleCount.Add(-1)
		case <-idle.C:
			idleCount.Add(-1)
			return
		}
	}
}
