package admission

import (
	"sync"
	"testing"
	"time"
)

// WebhookTime adds up the mutating calls and takes the longest validating
// one, as upstream's sum and max latency trackers, whatever the order and
// concurrency of the calls.
func TestRecordWebhookTime(t *testing.T) {
	r := NewRecord()
	var wg sync.WaitGroup
	for _, c := range []struct {
		mutating bool
		d        time.Duration
	}{{true, 30 * time.Millisecond}, {false, 10 * time.Millisecond}, {true, 20 * time.Millisecond}, {false, 40 * time.Millisecond}, {false, 5 * time.Millisecond}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.AddWebhookCall(c.mutating, c.d)
		}()
	}
	wg.Wait()
	if got, want := r.WebhookTime(), 90*time.Millisecond; got != want {
		t.Errorf("WebhookTime() = %v, want %v (30ms+20ms mutating, 40ms the longest validating)", got, want)
	}
	var none *Record
	none.AddWebhookCall(true, time.Second)
	if got := none.WebhookTime(); got != 0 {
		t.Errorf("nil record: WebhookTime() = %v, want 0", got)
	}
}
