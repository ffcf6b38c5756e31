package apiserver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Upstream's request lifetimes (k8s.io/apiserver's server config): a
// request that is not long-running must finish within RequestTimeout
// (--request-timeout), or within the `timeout` it asks for when that is
// shorter; a watch without timeoutSeconds ends between MinRequestTimeout
// (--min-request-timeout) and twice that, at random, so that watchers do
// not all come back at once.
const (
	DefaultRequestTimeout    = time.Minute
	DefaultMinRequestTimeout = 1800 * time.Second
)

// longRunningSubresources are the subresources kube-apiserver serves
// without a deadline (its LongRunningFunc), as the watch and proxy verbs.
var longRunningSubresources = map[string]bool{"attach": true, "exec": true, "proxy": true, "log": true, "portforward": true}

// isLongRunning says whether a request is served without the request
// timeout: watches, proxies, streams of a pod, /debug/pprof/ and the
// streaming paths of Extra handlers.
func (s *Server) isLongRunning(info *requestInfo) bool {
	if info.Verb == "watch" || info.Verb == "proxy" {
		return true
	}
	if info.IsResource {
		return longRunningSubresources[info.Subresource]
	}
	return strings.HasPrefix(info.Path, "/debug/pprof/") || slices.Contains(s.cfg.LongRunningPaths, info.Path)
}

// requestTimeout is the deadline of a request that is not long-running:
// the `timeout` parameter when it is positive and shorter than the
// server's bound, else the bound. An unparsable one is upstream's 400.
func (s *Server) requestTimeout(r *http.Request) (time.Duration, error) {
	limit := s.cfg.RequestTimeout
	if !strings.Contains(r.URL.RawQuery, "timeout") { // most requests: no query to parse
		return limit, nil
	}
	v := r.URL.Query().Get("timeout")
	if v == "" {
		return limit, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid timeout specified in the request URL - %v", err))
	}
	if d > 0 && d < limit {
		return d, nil
	}
	return limit, nil
}

// watchTimeout is how long a watch runs: timeoutSeconds when given (a
// negative one ends the watch at once, as upstream), else a random time
// between the minimum request timeout and twice it.
func (s *Server) watchTimeout(timeoutSeconds *int64) time.Duration {
	if timeoutSeconds != nil && *timeoutSeconds != 0 {
		return time.Duration(*timeoutSeconds) * time.Second
	}
	min := s.cfg.MinRequestTimeout
	return time.Duration(float64(min) * (rand.Float64() + 1))
}

// serveWithDeadline runs serveRequest with the request's deadline in its
// context and, when the deadline passes first, answers upstream's 504
// Timeout Status (or, if serveRequest has begun its answer, aborts the
// response, which ends an HTTP/1 connection or resets an HTTP/2 stream).
// serveRequest goes on in a goroutine other than the caller's (see
// startRun) until it sees its context end; its later writes are dropped.
// A panic in it is raised again here, for net/http to log.
func (s *Server) serveWithDeadline(w http.ResponseWriter, r *http.Request, timeout time.Duration, info *requestInfo) {
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	run := deadlineRuns.Get().(*deadlineRun)
	run.tw.w, run.tw.ctx = w, ctx
	if cc, ok := w.Header()["Cache-Control"]; ok { // the handler sees it, as upstream's sees the outer headers
		if run.tw.header == nil {
			run.tw.header = http.Header{}
		}
		run.tw.header["Cache-Control"] = cc
	}
	run.s, run.info, run.r, run.ctx = s, info, r, ctx
	startRun(run)
	select {
	case v := <-run.done:
		if p, ok := v.(panicValue); ok {
			panic(p.value)
		}
		run.reuse()
	case <-ctx.Done():
		if m := s.cfg.RequestMetrics; m != nil {
			m.terminate(r, info, http.StatusGatewayTimeout)
		}
		run.tw.timeout()
	}
}

// deadlineRun is one request served within its deadline: its writer and
// the channel its handler's end is told on. A run whose handler ended
// before the deadline is used again; one that timed out is left to its
// handler, which may still hold the writer.
type deadlineRun struct {
	tw   timeoutWriter
	done chan any
	// s serves r in ctx, as info describes it (fields, not a closure:
	// one allocation less per request).
	s    *Server
	info *requestInfo
	r    *http.Request
	ctx  context.Context
}

var deadlineRuns = sync.Pool{New: func() any { return &deadlineRun{done: make(chan any, 1)} }}

func (run *deadlineRun) run() {
	defer func() {
		if p := recover(); p != nil {
			run.done <- panicValue{p}
			return
		}
		run.done <- nil
	}()
	run.s.serveRequest(run.ctx, &run.tw, run.r, run.info)
}

// reuse puts the run back in the pool once its handler has ended.
func (run *deadlineRun) reuse() {
	header := run.tw.header
	clear(header)
	run.tw = timeoutWriter{header: header}
	run.s, run.info, run.r, run.ctx = nil, nil, nil, nil
	deadlineRuns.Put(run)
}

type panicValue struct{ value any }

// timeoutWriter passes writes through to w until the request's deadline;
// after that they fail with http.ErrHandlerTimeout and w is not touched
// again (but by the 504). Writes hold the lock, so the timeout never races
// a write, and a write made once the deadline has passed counts as too
// late even before the timeout is noticed.
//
// The handler sets headers in a map of its own, copied to w when it
// answers: the 504 never reads a map the handler may still be writing.
type timeoutWriter struct {
	w           http.ResponseWriter
	ctx         context.Context
	mu          sync.Mutex
	header      http.Header
	timedOut    bool
	wroteHeader bool
}

// answer copies the handler's headers to w before its first write. tw.mu
// is held.
func (tw *timeoutWriter) answer() {
	if tw.wroteHeader {
		return
	}
	tw.wroteHeader = true
	dst := tw.w.Header()
	for k, v := range tw.header {
		dst[k] = v
	}
}

// late: the response may no longer be written. tw.mu is held.
func (tw *timeoutWriter) late() bool {
	return tw.timedOut || errors.Is(tw.ctx.Err(), context.DeadlineExceeded)
}

func (tw *timeoutWriter) Header() http.Header {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.header == nil {
		tw.header = http.Header{}
	}
	return tw.header
}

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.late() || tw.wroteHeader {
		return
	}
	tw.answer()
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.late() {
		return 0, http.ErrHandlerTimeout
	}
	tw.answer()
	return tw.w.Write(p)
}

func (tw *timeoutWriter) Flush() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.late() {
		return
	}
	tw.answer()
	if f, ok := tw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// timeout ends the response: upstream's 504 when nothing was written yet,
// else an aborted response.
func (tw *timeoutWriter) timeout() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.timedOut = true
	if tw.wroteHeader {
		panic(http.ErrAbortHandler)
	}
	// Upstream writes the Status as encoding/json does, without kind or
	// apiVersion, and sets no Content-Type (net/http sniffs text/plain).
	tw.w.WriteHeader(http.StatusGatewayTimeout)
	_, _ = tw.w.Write(timeoutBody)
}

var timeoutBody = []byte(`{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}` + "\n")

// writeTimeout is upstream's bound on a create, update, patch or delete
// (its handlers' requestTimeoutUpperBound): admission and storage together,
// within the request's own deadline.
var writeTimeout = 34 * time.Second

// writeDeadline is ctx with writeTimeout, and what turns the error of a
// write that failed because that deadline passed into upstream's 504.
func writeDeadline(ctx context.Context) (context.Context, func(error) error, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	timedOut := func(err error) error {
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return apierrors.NewTimeoutError(fmt.Sprintf("request did not complete within requested timeout - %v", ctx.Err()), 0)
		}
		return err
	}
	return ctx, timedOut, cancel
}
