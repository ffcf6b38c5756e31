package apiserver

import (
	"bufio"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/storage/memory"
)

// deadlineServer is a server whose extra handlers block until their
// request's context ends (after writing "partial" on /partial, panicking
// on /panic), with the given request timeout.
func deadlineServer(t *testing.T, timeout time.Duration) *httptest.Server {
	t.Helper()
	cfg := testConfig(memory.New(), registry.NewCatalogue())
	cfg.RequestTimeout = timeout
	block := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/partial":
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		case "/panic":
			panic("boom")
		}
		<-r.Context().Done()
		_, _ = w.Write([]byte("too late"))
	})
	cfg.Extra = map[string]http.Handler{"/block": block, "/partial": block, "/panic": block, "/stream": block}
	cfg.LongRunningPaths = []string{"/stream"}
	s := New(cfg)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the aborted and panicking handlers
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// A request that outlives the request timeout is upstream's 504 Timeout
// Status; a shorter `timeout` parameter wins, a longer one does not; an
// unparsable one is upstream's 400.
func TestRequestTimeout(t *testing.T) {
	ts := deadlineServer(t, 300*time.Millisecond)
	get := func(path string) (int, string, time.Duration) {
		start := time.Now()
		resp, err := ts.Client().Get(ts.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), time.Since(start)
	}
	const timeoutStatus = `"message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}`
	for _, path := range []string{"/block", "/block?timeout=50ms", "/block?timeout=1h", "/block?timeout=0s", "/block?timeout=-5s"} {
		code, body, _ := get(path)
		if code != http.StatusGatewayTimeout || !strings.Contains(body, timeoutStatus) || strings.Contains(body, "too late") {
			t.Errorf("GET %s = %d %s, want 504 %s", path, code, body, timeoutStatus)
		}
	}
	code, body, _ := get("/block?timeout=soon")
	if code != http.StatusBadRequest || !strings.Contains(body, `invalid timeout specified in the request URL - time: invalid duration \"soon\"`) {
		t.Errorf("GET /block?timeout=soon = %d %s, want upstream's 400", code, body)
	}
	// A shorter timeout parameter ends the request before the server's
	// bound: with a 10-minute bound, it still answers.
	ts = deadlineServer(t, 10*time.Minute)
	if code, body, _ := get("/block?timeout=100ms"); code != http.StatusGatewayTimeout {
		t.Errorf("GET /block?timeout=100ms under a 10m bound = %d %s, want 504", code, body)
	}
}

// A request that timed out after it began answering is aborted (the
// client sees a broken response, not a 504 glued to its body); a panic is
// the connection's end, not the server's; long-running paths have no
// deadline.
func TestRequestTimeoutAbortsAndStreams(t *testing.T) {
	ts := deadlineServer(t, 200*time.Millisecond)
	resp, err := ts.Client().Get(ts.URL + "/partial")
	if err == nil {
		body, readErr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if readErr == nil {
			t.Errorf("GET /partial = %d %q, want an aborted response", resp.StatusCode, body)
		}
	}
	if resp, err := ts.Client().Get(ts.URL + "/panic"); err == nil {
		resp.Body.Close()
		t.Errorf("GET /panic = %d, want the connection closed", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/stream", nil)
	resp, err = ts.Client().Do(req)
	if err == nil {
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		resp.Body.Close()
		t.Errorf("GET /stream answered %d %q before the client gave up, want it still running after the request timeout", resp.StatusCode, line)
	}
	if ctx.Err() == nil {
		t.Errorf("GET /stream ended before the client's 1s: %v", err)
	}
}

// A watch without timeoutSeconds runs between the minimum request timeout
// and twice it; timeoutSeconds wins when given, a negative one ending the
// watch at once.
func TestWatchTimeout(t *testing.T) {
	s := New(Config{MinRequestTimeout: 10 * time.Second})
	for range 100 {
		if d := s.watchTimeout(nil); d < 10*time.Second || d >= 20*time.Second {
			t.Fatalf("watchTimeout(nil) = %v, want [10s, 20s)", d)
		}
	}
	for secs, want := range map[int64]time.Duration{5: 5 * time.Second, -1: -time.Second} {
		if d := s.watchTimeout(&secs); d != want {
			t.Errorf("watchTimeout(%d) = %v, want %v", secs, d, want)
		}
	}
	zero := int64(0)
	if d := s.watchTimeout(&zero); d < 10*time.Second {
		t.Errorf("watchTimeout(0) = %v, want the randomized default", d)
	}
}

// blockingAdmission, once on, holds every write in admission until its
// context ends.
type blockingAdmission struct{ on atomic.Bool }

func (*blockingAdmission) Handles(admission.Operation) bool { return true }

func (b *blockingAdmission) Admit(ctx context.Context, _ *admission.Attributes) error {
	if !b.on.Load() {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

// A write (admission and storage together) has its own bound under the
// request timeout, upstream's 34 s: past it, upstream's 504 "did not
// complete within requested timeout".
func TestWriteTimeout(t *testing.T) {
	defer func(d time.Duration) { writeTimeout = d }(writeTimeout)
	writeTimeout = 200 * time.Millisecond
	blocking := &blockingAdmission{}
	ts := newTestServer(t, admission.NamedPlugin{Name: "Blocking", Plugin: blocking})
	ts.must(201, "POST", cmPath, mediaJSON, `{"metadata":{"name":"c"}}`)
	blocking.on.Store(true)
	const want = `"message":"Timeout: request did not complete within requested timeout - context deadline exceeded","reason":"Timeout"`
	for _, tc := range []struct{ method, path, contentType, body string }{
		{"POST", cmPath, mediaJSON, `{"metadata":{"name":"d"}}`},
		{"PUT", cmPath + "/c", mediaJSON, `{"metadata":{"name":"c"}}`},
		{"PATCH", cmPath + "/c", mediaMergePatch, `{"data":{"a":"b"}}`},
	} {
		if w := ts.do(tc.method, tc.path, tc.contentType, tc.body); w.Code != 504 || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s %s held in admission = %d %.300s, want 504 %s", tc.method, tc.path, w.Code, w.Body, want)
		}
	}
}

// A worker that served a run, even one that panicked or timed out, waits
// for the next run and serves it.
func TestDeadlineWorkerServesTheNextRun(t *testing.T) {
	ts := deadlineServer(t, 100*time.Millisecond)
	for _, path := range []string{"/panic", "/block", "/version"} {
		if resp, err := ts.Client().Get(ts.URL + path); err == nil {
			resp.Body.Close()
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/version", nil)
	rec := httptest.NewRecorder()
	run := &deadlineRun{done: make(chan any, 1), s: ts.Config.Handler.(*Server), info: parseRequestInfo(r), r: r, ctx: context.Background()}
	run.tw.w, run.tw.ctx = rec, context.Background()
	select {
	case idleWorkers <- run:
	case <-time.After(5 * time.Second):
		t.Fatal("no worker waits for a run after the requests ended")
	}
	if v := <-run.done; v != nil || rec.Code != http.StatusOK {
		t.Errorf("run of GET /version on an idle worker = %d %v, want 200 and no panic", rec.Code, v)
	}
}

// After a burst of requests more than maxIdleWorkers at once, at most that
// many workers wait for runs; the others exited.
func TestDeadlineWorkersIdleAtMostMax(t *testing.T) {
	ts := deadlineServer(t, 100*time.Millisecond)
	var wg sync.WaitGroup
	for range maxIdleWorkers + 36 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := ts.Client().Get(ts.URL + "/block"); err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	time.Sleep(100 * time.Millisecond) // the timed-out handlers end
	if n := idleCount.Load(); n > maxIdleWorkers {
		t.Errorf("%d workers wait after a burst of %d requests, want at most %d", n, maxIdleWorkers+36, maxIdleWorkers)
	}
}
