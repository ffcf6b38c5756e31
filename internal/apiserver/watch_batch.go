package apiserver

import (
	"bytes"
	"sync"
)

// watchBatchMax is how many bytes of frames a watch holds before it
// writes them to its response without waiting for its queue to empty:
// HTTP/2's default largest frame (larger writes are cut into frames of
// that size anyway), and what 1,000 watchers in a burst hold at most
// between them is 16 MiB.
const watchBatchMax = 16 << 10

// watchBatches are the buffers watches gather their frames in between
// two flushes; one is held only while a burst is being written.
var watchBatches = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// batch holds a frame until the burst it belongs to is flushed, so that
// the burst reaches the response writer as one write: HTTP/2 then sends
// it in frames of up to the peer's maximum size (one TLS record and
// write each) instead of one or more per event, for the server and for
// the client reading it.
func (ws *watchStream) batch(frame []byte) error {
	if ws.gathered == nil {
		ws.gathered = watchBatches.Get().(*bytes.Buffer)
	}
	ws.gathered.Write(frame)
	ws.unflushed = true
	if ws.gathered.Len() >= watchBatchMax {
		return ws.writeGathered()
	}
	return nil
}

// writeGathered writes the frames gathered so far to the response.
func (ws *watchStream) writeGathered() error {
	b := ws.gathered
	if b == nil {
		return nil
	}
	ws.gathered = nil
	_, err := ws.w.Write(b.Bytes())
	if b.Cap() <= 2*watchBatchMax {
		b.Reset()
		watchBatches.Put(b)
	}
	return err
}

// flushIfIdle writes and flushes what was gathered once no more events
// wait: a burst goes to the connection at once, as upstream's watch
// flushes only when its channel is empty.
func (ws *watchStream) flushIfIdle() error {
	if !ws.unflushed || ws.pending() != 0 {
		return nil
	}
	return ws.flushGathered()
}

// flushGathered writes what was gathered and flushes it.
func (ws *watchStream) flushGathered() error {
	err := ws.writeGathered()
	ws.flusher.Flush()
	ws.unflushed = false
	return err
}
