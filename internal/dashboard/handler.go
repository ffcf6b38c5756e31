package dashboard

import (
	"embed"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/admitd/admitd/pkg/admission/trace"
)

//go:embed static
var static embed.FS

// assets are the page's files by their path under Path.
var assets = map[string]struct{ file, contentType string }{
	"/":          {"static/index.html", "text/html; charset=utf-8"},
	"/app.js":    {"static/app.js", "text/javascript; charset=utf-8"},
	"/style.css": {"static/style.css", "text/css; charset=utf-8"},
}

// apiPrefix is where the page's JSON and event stream are served.
const apiPrefix = "/api/"

// EventsPath is the dashboard's stream of decisions (server-sent events),
// a long-running request.
const EventsPath = Path + apiPrefix + "events"

// contentSecurityPolicy lets the page load and call only its own origin.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Routes are the handlers to mount in the API server's table of extra
// handlers (keys as apiserver.Config.Extra reads them: an exact path, or
// a parent ending in "/" for the paths one level below it).
func (d *Dashboard) Routes() map[string]http.Handler {
	h := http.HandlerFunc(d.serve)
	return map[string]http.Handler{
		Path: h, Path + "/": h, Path + apiPrefix: h, Path + apiPrefix + "traces/": h,
	}
}

// Handler serves everything under Path; it does no authentication or
// authorization (mount it behind the server's).
func (d *Dashboard) Handler() http.Handler { return http.HandlerFunc(d.serve) }

func (d *Dashboard) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeStatus(w, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "dashboard"}, strings.ToLower(r.Method)))
		return
	}
	if r.URL.Path == Path {
		// relative, so that it also works under a proxy's prefix
		h.Set("Location", "dashboard/")
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	sub := strings.TrimPrefix(r.URL.Path, Path)
	if api, ok := strings.CutPrefix(sub, apiPrefix); ok {
		d.serveAPI(w, r, api)
		return
	}
	a, ok := assets[sub]
	if !ok {
		writeStatus(w, notFound())
		return
	}
	body, err := static.ReadFile(a.file)
	if err != nil {
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	h.Set("Content-Type", a.contentType)
	_, _ = w.Write(body)
}

func (d *Dashboard) serveAPI(w http.ResponseWriter, r *http.Request, api string) {
	switch {
	case api == "config":
		v, err := d.config.get(r.Context())
		if err != nil {
			d.o.Logger.Error("reading the admission configuration for the dashboard", "err", err)
			writeStatus(w, apierrors.NewInternalError(err))
			return
		}
		writeJSON(w, v)
	case api == "stats":
		writeJSON(w, d.Stats())
	case api == "compliance":
		writeJSON(w, d.compliance())
	case api == "decisions":
		d.serveDecisions(w, r)
	case api == "events":
		d.serveEvents(w, r)
	case strings.HasPrefix(api, "traces/"):
		d.serveTrace(w, r, strings.TrimPrefix(api, "traces/"))
	default:
		writeStatus(w, notFound())
	}
}

// compliance is what api/compliance serves: the background audit's last
// results, or {"enabled": false} when it is off.
func (d *Dashboard) compliance() any {
	if d.o.Compliance == nil {
		return map[string]bool{"enabled": false}
	}
	return struct {
		Enabled bool `json:"enabled"`
		Results any  `json:"results"`
	}{true, d.o.Compliance()}
}

// Stats returns the statistics of the requests seen so far.
func (d *Dashboard) Stats() Stats {
	requests, calls := d.stats.snapshot()
	return Stats{Since: d.started, Requests: requests, Dropped: d.dropped.Load(), Streams: d.hub.streams(), Calls: calls}
}

// serveDecisions lists the decisions of the kept traces, newest first
// (?limit=N, default 100).
func (d *Dashboard) serveDecisions(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeStatus(w, apierrors.NewBadRequest("limit must be a non-negative integer, got "+strconv.Quote(v)))
			return
		}
		limit = n
	}
	out := []Decision{}
	if d.o.Traces != nil {
		for _, e := range d.o.Traces.List(trace.Filter{Limit: limit}) {
			out = append(out, decisionOfTrace(e.Trace()))
		}
	}
	writeJSON(w, out)
}

// serveTrace serves one kept trace as the trace endpoint does (JSON, or
// the tree with ?output=tree).
func (d *Dashboard) serveTrace(w http.ResponseWriter, r *http.Request, id string) {
	if id == "" || strings.Contains(id, "/") {
		writeStatus(w, notFound())
		return
	}
	if d.o.Traces == nil {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Group: "admission.admitd.io", Resource: "traces"}, id))
		return
	}
	in := r.Clone(r.Context())
	in.URL.Path = trace.Path + "/" + id
	trace.Handler(d.o.Traces).ServeHTTP(w, in)
}

// serveEvents streams decisions as server-sent events ("decision", and
// "dropped" when this client fell behind) until the client goes or the
// server stops.
func (d *Dashboard) serveEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "text/event-stream")
		return
	}
	s, err := d.hub.subscribe(d.o.StreamBuffer)
	if err == errTooManyStreams {
		writeStatus(w, apierrors.NewTooManyRequests(err.Error(), 5))
		return
	}
	if err != nil {
		writeStatus(w, apierrors.NewServiceUnavailable(err.Error()))
		return
	}
	defer d.hub.unsubscribe(s)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sse := &eventWriter{w: w, rc: rc, timeout: d.o.WriteTimeout}
	sse.comment("connected")
	sse.raw("retry: 3000\n\n")
	tick := time.NewTicker(d.o.Heartbeat)
	defer tick.Stop()
	var reported uint64
	for sse.err == nil {
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-tick.C:
			sse.comment("keepalive")
		case ev := <-s.events:
			if n := s.dropped.Load(); n != reported {
				reported = n
				sse.event("dropped", "", map[string]uint64{"dropped": n})
			}
			sse.event("decision", strconv.FormatUint(ev.Seq, 10), ev)
		}
	}
}

// eventWriter writes server-sent events, flushing each; the first error
// ends the stream.
type eventWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	err     error
}

// raw writes s within the timeout. The deadline is lifted after the write:
// over HTTP/2 a deadline that passes ends the stream even while it is idle.
func (e *eventWriter) raw(s string) {
	if e.err != nil {
		return
	}
	deadline := e.rc.SetWriteDeadline(time.Now().Add(e.timeout)) == nil // not every writer supports it
	if _, e.err = e.w.Write([]byte(s)); e.err == nil {
		e.err = e.rc.Flush()
	}
	if deadline && e.err == nil {
		e.err = e.rc.SetWriteDeadline(time.Time{})
	}
}

func (e *eventWriter) comment(text string) { e.raw(": " + text + "\n\n") }

func (e *eventWriter) event(name, id string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	var b strings.Builder
	b.WriteString("event: " + name + "\n")
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("data: ")
	b.Write(data) // JSON has no raw newlines
	b.WriteString("\n\n")
	e.raw(b.String())
}

// notFound is the API server's 404 for a path it does not serve.
func notFound() *apierrors.StatusError {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "the server could not find the requested resource", 0, false)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.ErrStatus
	st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
}
