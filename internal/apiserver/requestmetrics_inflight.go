package apiserver

import (
	"context"
	"sync"
	"time"
)

// executingMarks are the highest numbers of read-only and of mutating
// requests executing at once (past flow control or the in-flight limit)
// since the last sample, as upstream's watermark: noted whenever the
// number changes, reset to 0 at each sample.
type executingMarks struct {
	mu                         sync.Mutex
	readOnly, mutating         int // executing now, under flow control
	readOnlyMark, mutatingMark int
}

// add counts a request of the kind in (delta 1) or out (delta -1) of
// execution under flow control.
func (e *executingMarks) add(readOnly bool, delta int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if readOnly {
		e.readOnly += delta
		e.readOnlyMark = max(e.readOnlyMark, e.readOnly)
	} else {
		e.mutating += delta
		e.mutatingMark = max(e.mutatingMark, e.mutating)
	}
}

// note records n requests of the kind executing under the in-flight
// limit; a nil e records nothing.
func (e *executingMarks) note(readOnly bool, n int) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if readOnly {
		e.readOnlyMark = max(e.readOnlyMark, n)
	} else {
		e.mutatingMark = max(e.mutatingMark, n)
	}
}

// take returns the marks and resets them.
func (e *executingMarks) take() (readOnly, mutating int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	readOnly, mutating = e.readOnlyMark, e.mutatingMark
	e.readOnlyMark, e.mutatingMark = 0, 0
	return readOnly, mutating
}

// inflightSamplePeriod is upstream's period of
// apiserver_current_inflight_requests.
const inflightSamplePeriod = time.Second

// SampleInflight sets apiserver_current_inflight_requests to the highest
// numbers of read-only and mutating requests executing at once in each
// second, as upstream's watermark maintenance does, until ctx ends.
func (m *RequestMetrics) SampleInflight(ctx context.Context) {
	t := time.NewTicker(inflightSamplePeriod)
	defer t.Stop()
	for {
		m.publishInflight()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (m *RequestMetrics) publishInflight() {
	readOnly, mutating := m.marks.take()
	m.inflightReadOnly.Set(float64(readOnly))
	m.inflightMutating.Set(float64(mutating))
}
