package apiserver

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// writeCountingRecorder counts the writes and flushes a response gets.
type writeCountingRecorder struct {
	*httptest.ResponseRecorder
	writes, flushes int
}

func (r *writeCountingRecorder) Write(p []byte) (int, error) {
	r.writes++
	return r.ResponseRecorder.Write(p)
}

func (r *writeCountingRecorder) Flush() { r.flushes++ }

// TestWatchGathersABurstIntoOneWrite: while events wait, a watch's frames
// reach the response as one write when the queue empties (or when they
// reach watchBatchMax), in order; without a queue each frame is written
// and flushed at once.
func TestWatchGathersABurstIntoOneWrite(t *testing.T) {
	rec := &writeCountingRecorder{ResponseRecorder: httptest.NewRecorder()}
	waiting := 3
	ws := &watchStream{w: rec, flusher: rec, pending: func() int { return waiting }}
	var want bytes.Buffer
	for i := range 3 {
		frame := []byte(strings.Repeat(string(rune('a'+i)), 10) + "\n")
		want.Write(frame)
		if err := ws.write(frame); err != nil {
			t.Fatal(err)
		}
		waiting--
		if err := ws.flushIfIdle(); err != nil {
			t.Fatal(err)
		}
		if i < 2 && (rec.writes != 0 || rec.flushes != 0) {
			t.Fatalf("after frame %d of a burst: %d writes, %d flushes; want none yet", i, rec.writes, rec.flushes)
		}
	}
	if rec.writes != 1 || rec.flushes != 1 || rec.Body.String() != want.String() {
		t.Fatalf("after the burst: %d writes, %d flushes, body %q; want 1, 1, %q", rec.writes, rec.flushes, rec.Body.String(), want.String())
	}

	waiting = 1000
	big := bytes.Repeat([]byte("x"), watchBatchMax/4)
	for range 4 {
		if err := ws.write(big); err != nil {
			t.Fatal(err)
		}
	}
	if rec.writes != 2 || rec.flushes != 1 {
		t.Errorf("after %d bytes of a burst: %d writes, %d flushes; want the batch written (2), not flushed (1)", watchBatchMax, rec.writes, rec.flushes)
	}

	direct := &writeCountingRecorder{ResponseRecorder: httptest.NewRecorder()}
	ws = &watchStream{w: direct, flusher: direct}
	for range 2 {
		if err := ws.write([]byte("frame\n")); err != nil {
			t.Fatal(err)
		}
	}
	if direct.writes != 2 || direct.flushes != 2 {
		t.Errorf("without a queue: %d writes, %d flushes; want 2 and 2", direct.writes, direct.flushes)
	}
}

var _ http.Flusher = (*writeCountingRecorder)(nil)
