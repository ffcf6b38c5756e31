package dashboard

import (
	"testing"
)

// TestHubNeverBlocks: a stream whose client does not read keeps its
// buffer's worth and counts the rest as dropped; publishing goes on.
func TestHubNeverBlocks(t *testing.T) {
	h := newHub(2)
	slow, err := h.subscribe(2)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := h.subscribe(100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.subscribe(1); err != errTooManyStreams {
		t.Errorf("third subscribe: %v, want %v", err, errTooManyStreams)
	}
	for range 10 {
		h.publish(Decision{AuditID: "x"})
	}
	if len(slow.events) != 2 || slow.dropped.Load() != 8 || len(fast.events) != 10 || fast.dropped.Load() != 0 {
		t.Errorf("slow stream holds %d, dropped %d; fast holds %d, dropped %d; want 2, 8, 10, 0",
			len(slow.events), slow.dropped.Load(), len(fast.events), fast.dropped.Load())
	}
	if first := <-fast.events; first.Seq != 1 {
		t.Errorf("first event seq %d, want 1", first.Seq)
	}
	h.unsubscribe(slow)
	if n := h.streams(); n != 1 {
		t.Errorf("streams after unsubscribe = %d, want 1", n)
	}
	h.close()
	select {
	case <-fast.done:
	default:
		t.Error("close left a stream open")
	}
	if _, err := h.subscribe(1); err != errClosed {
		t.Errorf("subscribe after close: %v, want %v", err, errClosed)
	}
	h.unsubscribe(fast) // after close: no panic
}
