package dashboard

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/admitd/admitd/pkg/admission"
)

// WindowSize is how many of a webhook's or policy's latest calls its
// percentiles are computed from.
const WindowSize = 1024

// maxTracked bounds the webhooks and policies with statistics; past it the
// one seen least recently is forgotten.
const maxTracked = 1024

// CallStats are the statistics of one webhook or policy (binding).
type CallStats struct {
	// Plugin is MutatingAdmissionWebhook, ValidatingAdmissionWebhook,
	// ValidatingAdmissionPolicy or MutatingAdmissionPolicy; Name the
	// webhook or policy and Configuration its configuration or binding.
	Plugin        string `json:"plugin"`
	Name          string `json:"name"`
	Configuration string `json:"configuration,omitempty"`
	// Calls counts the calls (evaluations) since the server started,
	// skips not included. Errors are calls that failed (a webhook that
	// could not be called or answered wrongly, a policy whose expression
	// failed), whatever the failure policy; FailedOpen those of them
	// that failurePolicy Ignore admitted; Rejected the calls that denied
	// the request.
	Calls      uint64 `json:"calls"`
	Errors     uint64 `json:"errors"`
	FailedOpen uint64 `json:"failedOpen"`
	Rejected   uint64 `json:"rejected"`
	// ErrorRate and FailOpenRate are Errors and FailedOpen over Calls.
	ErrorRate    float64 `json:"errorRate"`
	FailOpenRate float64 `json:"failOpenRate"`
	// P50, P90 and P99 are latency percentiles in milliseconds (nearest
	// rank) over the last Samples calls.
	P50     float64   `json:"p50"`
	P90     float64   `json:"p90"`
	P99     float64   `json:"p99"`
	Samples int       `json:"samples"`
	Last    time.Time `json:"last"`
}

// Stats are the statistics the dashboard shows.
type Stats struct {
	Since time.Time `json:"since"`
	// Requests counts the requests that ran admission, seen by Run;
	// Dropped those it could not keep up with (not in any count).
	Requests uint64      `json:"requests"`
	Dropped  uint64      `json:"dropped"`
	Streams  int         `json:"streams"`
	Calls    []CallStats `json:"calls"`
}

type callKey struct{ plugin, name, config string }

// callWindow is one webhook's or policy's counts and latest latencies.
type callWindow struct {
	CallStats
	window []time.Duration // ring of the latest WindowSize durations
	next   int
}

// stats accumulates the calls of every request Run sees.
type stats struct {
	mu       sync.Mutex
	requests uint64
	calls    map[callKey]*callWindow
	steps    []admission.Step // add's buffer, reused
}

func newStats() *stats { return &stats{calls: map[callKey]*callWindow{}} }

// add counts the webhook and policy steps of one request.
func (s *stats) add(rec *admission.Record, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if rec == nil {
		return
	}
	s.steps = rec.AppendSteps(s.steps[:0])
	for i := range s.steps {
		st := &s.steps[i]
		if st.Name == "" || st.Skip != "" || !st.Matched {
			continue // a compiled-in plugin, or not called
		}
		s.window(st, now).count(st, now)
	}
	clear(s.steps) // keep no record's strings alive
}

func (s *stats) window(st *admission.Step, now time.Time) *callWindow {
	k := callKey{st.Plugin, st.Name, st.Config}
	w := s.calls[k]
	if w == nil {
		if len(s.calls) >= maxTracked {
			s.forgetOldest()
		}
		w = &callWindow{CallStats: CallStats{Plugin: st.Plugin, Name: st.Name, Configuration: st.Config}}
		s.calls[k] = w
	}
	return w
}

func (s *stats) forgetOldest() {
	var oldest callKey
	var at time.Time
	for k, w := range s.calls {
		if at.IsZero() || w.Last.Before(at) {
			oldest, at = k, w.Last
		}
	}
	delete(s.calls, oldest)
}

// count adds one call. A webhook's denial also leaves its message as the
// step's error, so an error is a failure only when the step did not deny;
// a failure that failurePolicy Fail applied rejects the request too.
func (w *callWindow) count(st *admission.Step, now time.Time) {
	w.Calls++
	w.Last = now
	failedOpen := st.Detail != nil && st.Detail.FailedOpen
	denied := st.Reason == "denied" || strings.HasPrefix(st.Reason, "failed: ")
	if failedOpen || st.Err != "" && st.Reason != "denied" {
		w.Errors++
	}
	if failedOpen {
		w.FailedOpen++
	}
	if denied || st.Err != "" && !failedOpen {
		w.Rejected++
	}
	if len(w.window) < WindowSize {
		w.window = append(w.window, st.Duration)
	} else {
		w.window[w.next] = st.Duration
		w.next = (w.next + 1) % WindowSize
	}
}

// snapshot returns the statistics, sorted by plugin, configuration and name.
func (s *stats) snapshot() (requests uint64, calls []CallStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	calls = make([]CallStats, 0, len(s.calls))
	for _, w := range s.calls {
		c := w.CallStats
		c.Samples = len(w.window)
		sorted := slices.Clone(w.window)
		slices.Sort(sorted)
		c.P50, c.P90, c.P99 = percentile(sorted, 0.50), percentile(sorted, 0.90), percentile(sorted, 0.99)
		if c.Calls > 0 {
			c.ErrorRate = float64(c.Errors) / float64(c.Calls)
			c.FailOpenRate = float64(c.FailedOpen) / float64(c.Calls)
		}
		calls = append(calls, c)
	}
	slices.SortFunc(calls, func(a, b CallStats) int {
		return cmp.Or(cmp.Compare(a.Plugin, b.Plugin), cmp.Compare(a.Configuration, b.Configuration), cmp.Compare(a.Name, b.Name))
	})
	return s.requests, calls
}

// percentile is the nearest-rank percentile of sorted durations, in
// milliseconds; 0 without samples.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	return millis(sorted[max(rank, 0)])
}
