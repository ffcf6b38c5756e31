package dashboard

import (
	"errors"
	"sync"
	"sync/atomic"
)

// Errors of subscribe.
var (
	errTooManyStreams = errors.New("too many dashboard event streams are open")
	errClosed         = errors.New("the server is stopping")
)

// hub fans decisions out to the open event streams. Publishing never
// blocks: each stream has a bounded buffer, and a stream whose client
// reads too slowly loses the events that do not fit (counted).
type hub struct {
	max int

	mu     sync.Mutex
	subs   map[*stream]struct{}
	seq    uint64
	closed bool
}

// stream is one client's subscription.
type stream struct {
	events  chan Decision
	dropped atomic.Uint64
	// done is closed when the hub closes (the server stops).
	done chan struct{}
}

func newHub(max int) *hub { return &hub{max: max, subs: map[*stream]struct{}{}} }

// subscribe opens a stream of buffer events.
func (h *hub) subscribe(buffer int) (*stream, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return nil, errClosed
	case len(h.subs) >= h.max:
		return nil, errTooManyStreams
	}
	s := &stream{events: make(chan Decision, buffer), done: make(chan struct{})}
	h.subs[s] = struct{}{}
	return s, nil
}

// unsubscribe ends s; it is safe after close.
func (h *hub) unsubscribe(s *stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

// streams is the number of open streams.
func (h *hub) streams() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// publish numbers d and offers it to every stream without waiting.
func (h *hub) publish(d Decision) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	d.Seq = h.seq
	for s := range h.subs {
		select {
		case s.events <- d:
		default:
			s.dropped.Add(1)
		}
	}
}

// close ends every stream and refuses new ones.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		close(s.done)
		delete(h.subs, s)
	}
}
