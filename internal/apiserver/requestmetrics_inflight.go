package apiserver

import (
	"context"
	"sync/atomic"
	"time"
)

// executingMarks are the highest numbers of read-only and of mutating
// requests executing at once (past flow control or the in-flight limit)
// since the last sample, as upstream's watermark: noted whenever the
// number changes, reset to 0 at each sample.
type executingMarks struct {
	readOnly, mutating         atomic.Int64 // executing now, under flow control
	readOnlyMark, mutatingMark atomic.Int64
}

// add counts a request of the kind in (delta 1) or out (delta -1) of
// execution under flow control.
func (e *executingMarks) add(readOnly bool, delta int) {
	if readOnly {
		raiseMark(&e.readOnlyMark, e.readOnly.Add(int64(delta)))
	} else {
		raiseMark(&e.mutatingMark, e.mutating.Add(int64(delta)))
	}
}

// note records n requests of the kind executing under the in-flight
// limit; a nil e records nothing.
func (e *executingMarks) note(readOnly bool, n int) {
	switch {
	case e == nil:
	case readOnly:
		raiseMark(&e.readOnlyMark, int64(n))
	default:
		raiseMark(&e.mutatingMark, int64(n))
	}
}

func raiseMark(mark *atomic.Int64, n int64) {
	for {
		old := mark.Load()
		if n <= old || mark.CompareAndSwap(old, n) {
			return
		}
	}
}

// take returns the marks and resets them.
func (e *executingMarks) take() (readOnly, mutating int64) {
	return e.readOnlyMark.Swap(0), e.mutatingMark.Swap(0)
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
