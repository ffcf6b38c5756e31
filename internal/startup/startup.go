// Package startup holds what a binary does only while it starts: the
// garbage collector paused from package initialization (see pausegc) until
// the command has started. Starting, admitd allocates a few tens of
// megabytes that stay live (schemes, caches, the bootstrap policy); the
// collections that growth would trigger from the runtime's 4 MB minimum
// heap are wasted work on the path to a ready server.
//
// It is not a tuning knob: GOGC in the environment turns it off, and only
// a binary that imports pausegc pauses anything (tests and library users
// never do).
package startup

import (
	"runtime/debug"
	"sync"
)

// pausedHeapLimit bounds the heap while collection is paused: past it the
// collector runs anyway (a start that reads a very large store).
const pausedHeapLimit = 256 << 20

// resume restores the collector's settings; nil until PauseGC.
var (
	mu     sync.Mutex
	resume func()
)

// PauseGC turns the garbage collector off, with a heap limit of 256 MiB
// (or GOMEMLIMIT's, if lower), until Resume.
func PauseGC() {
	mu.Lock()
	defer mu.Unlock()
	if resume != nil {
		return
	}
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(-1) // reads the limit
	if limit > pausedHeapLimit {
		debug.SetMemoryLimit(pausedHeapLimit)
	}
	resume = func() {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(percent)
	}
}

// Resume restores the collector's settings PauseGC changed; only its first
// call does anything, and without PauseGC it does nothing.
func Resume() {
	mu.Lock()
	defer mu.Unlock()
	if resume != nil {
		resume()
		resume = func() {}
	}
}
