package admission

import (
	"sync/atomic"
	"time"
)

// webhookTime is the time a request spent calling admission webhooks, as
// kube-apiserver's latency trackers count it for its SLI latency: the
// mutating calls added up (they run one after another, in every round) and
// the longest validating call (they run in parallel).
type webhookTime struct {
	mutating, validating atomic.Int64 // nanoseconds
}

// AddWebhookCall notes one call of an admission webhook (the round trip
// and the decoding of its answer) that took d. A nil r notes nothing.
func (r *Record) AddWebhookCall(mutating bool, d time.Duration) {
	switch {
	case r == nil:
		return
	case mutating:
		r.webhooks.mutating.Add(int64(d))
		return
	}
	for {
		old := r.webhooks.validating.Load()
		if int64(d) <= old || r.webhooks.validating.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// WebhookTime is the time the request's admission webhooks took as
// upstream leaves it out of apiserver_request_sli_duration_seconds: the
// mutating calls' sum plus the longest validating call; 0 for a nil r.
func (r *Record) WebhookTime() time.Duration {
	if r == nil {
		return 0
	}
	return time.Duration(r.webhooks.mutating.Load() + r.webhooks.validating.Load())
}
