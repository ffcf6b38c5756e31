package apiserver

import (
	"context"
	"sync/atomic"
	"time"
)

// requestMarks are the highest numbers of read-only and of mutating
// requests at once in a phase since the last sample, as upstream's
// watermarks: noted whenever the number changes, reset to 0 at each
// sample. The phases are executing (past flow control or the in-flight
// limit) and waiting in a flow-control queue.
type requestMarks struct {
	readOnly, mutating         atomic.Int64 // in the phase now, under flow control
	readOnlyMark, mutatingMark atomic.Int64
}

// add counts a request of the kind into (delta 1) or out of (delta -1)
// the phase under flow control.
func (e *requestMarks) add(readOnly bool, delta int) {
	if readOnly {
		raiseMark(&e.readOnlyMark, e.readOnly.Add(int64(delta)))
	} else {
		raiseMark(&e.mutatingMark, e.mutating.Add(int64(delta)))
	}
}

// note records n requests of the kind executing under the in-flight
// limit; a nil e records nothing.
func (e *requestMarks) note(readOnly bool, n int) {
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
func (e *requestMarks) take() (readOnly, mutating int64) {
	return e.readOnlyMark.Swap(0), e.mutatingMark.Swap(0)
}

// inflightSamplePeriod is upstream's period of
// apiserver_current_inflight_requests and apiserver_current_inqueue_requests.
const inflightSamplePeriod = time.Second

// QueueNote is what flow control calls as a request enters (delta 1) or
// leaves (delta -1) one of its queues. Once it is asked for,
// apiserver_current_inqueue_requests is sampled too, as upstream samples
// it under API Priority and Fairness only.
func (m *RequestMetrics) QueueNote() func(readOnly bool, delta int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inqueueReadOnly == nil {
		m.inqueueReadOnly, m.inqueueMutating = m.inqueue.WithLabelValues("readOnly"), m.inqueue.WithLabelValues("mutating")
	}
	return m.queued.add
}

// SampleInflight sets apiserver_current_inflight_requests (and
// apiserver_current_inqueue_requests under flow control) to the highest
// numbers of read-only and mutating requests executing (waiting) at once
// in each second, as upstream's watermark maintenance does, until ctx
// ends.
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
	m.mu.Lock()
	readOnlyGauge, mutatingGauge := m.inqueueReadOnly, m.inqueueMutating
	m.mu.Unlock()
	if readOnlyGauge != nil {
		readOnly, mutating = m.queued.take()
		readOnlyGauge.Set(float64(readOnly))
		mutatingGauge.Set(float64(mutating))
	}
}
