package apiserver

import "time"

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

// workerIdle is how long a worker waits for another run before it exits;
// idle workers are as many as requests were at once in that time.
const workerIdle = 10 * time.Second

// idleWorkers hands a run to a worker waiting for one.
var idleWorkers = make(chan *deadlineRun)

// startRun serves run on an idle worker, or on a new one.
func startRun(run *deadlineRun) {
	select {
	case idleWorkers <- run:
	default:
		go serveRuns(run)
	}
}

// serveRuns serves run, then any run handed to it, until it has waited
// workerIdle for one. It must not touch a run after that run's end was
// told (its done channel): the run may be in use again by then.
func serveRuns(run *deadlineRun) {
	idle := time.NewTimer(workerIdle)
	for {
		run.run()
		idle.Reset(workerIdle)
		select {
		case run = <-idleWorkers:
		case <-idle.C:
			return
		}
	}
}
