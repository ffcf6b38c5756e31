// Package dashboard serves admitd's admission dashboard at /dashboard: the
// configured webhooks and admission policies with their scopes and lint
// findings, a live stream of admission decisions (server-sent events),
// per-webhook and per-policy latency percentiles, error and fail-open
// rates, each request's admission trace, and, with the background audit
// on, the stored objects each policy's Audit bindings find in violation.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary: no
// build step, nothing fetched from the network, every call to the same
// origin. The handler does no authentication or authorization of its own:
// the API server mounts it behind its own, as a non-resource URL (see
// ClusterRoleRules). It only reads: the admission configuration, the
// traces the server keeps (already redacted, see package trace) and the
// statistics it computes from the requests it is shown (Observe).
//
// It is not a metrics system: statistics live in memory, cover the
// requests since the server started (percentiles the last WindowSize calls
// of each webhook or policy) and are lost on restart.
package dashboard

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/admitd/admitd/pkg/admission"
	"github.com/admitd/admitd/pkg/admission/trace"
	"github.com/admitd/admitd/pkg/lint"
)

// Path is where the dashboard is served; its page is Path + "/".
const Path = "/dashboard"

// ClusterRoleRules is the rule a ClusterRole needs to open the dashboard,
// as YAML.
const ClusterRoleRules = `- nonResourceURLs: ["/dashboard", "/dashboard/*"]
  verbs: ["get"]`

// Options configure a Dashboard.
type Options struct {
	// Configuration reads the live admission configuration, with the
	// namespaces, services and params its lint needs. Required.
	Configuration func(ctx context.Context) (*lint.Set, error)
	// Schemas type the CEL cost estimates of the configuration's lint
	// (lint.Options.Schemas); nil: only its CRDs.
	Schemas lint.Schemas
	// Traces are the traces the server keeps; nil when it keeps none.
	Traces *trace.Ring
	// Compliance returns the background audit's last results (served as
	// JSON at api/compliance); nil when the background audit is off.
	Compliance func() any
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now defaults to time.Now.
	Now func() time.Time
	// QueueSize bounds the requests waiting for Run; when it is full
	// Observe drops the request (counted). Default 1024.
	QueueSize int
	// MaxStreams bounds the event streams open at once. Default 64.
	MaxStreams int
	// StreamBuffer is the events a stream holds for a slow client before
	// it drops newer ones (counted, and told to the client). Default 64.
	StreamBuffer int
	// ConfigMaxAge is how long a read configuration is reused. Default 2s.
	ConfigMaxAge time.Duration
	// Heartbeat is how often an idle stream sends a comment, so that
	// proxies keep it open and a gone client is noticed. Default 15s.
	Heartbeat time.Duration
	// WriteTimeout bounds one write to a stream whose client stopped
	// reading; the stream ends then. Default 10s.
	WriteTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 1024
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = 64
	}
	if o.StreamBuffer <= 0 {
		o.StreamBuffer = 64
	}
	if o.ConfigMaxAge <= 0 {
		o.ConfigMaxAge = 2 * time.Second
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	return o
}

// Dashboard is the dashboard of one server. Observe feeds it finished
// requests; Run (one goroutine) turns them into statistics and events.
type Dashboard struct {
	o       Options
	queue   chan finished
	dropped atomic.Uint64 // requests Observe could not queue
	hub     *hub
	stats   *stats
	config  configCache
	started time.Time
}

// finished is a request handed to Run.
type finished struct {
	entry *trace.Entry
	rec   *admission.Record
	took  time.Duration
}

// New returns a dashboard; it shows live data once Run runs.
func New(o Options) *Dashboard {
	o = o.withDefaults()
	return &Dashboard{o: o, queue: make(chan finished, o.QueueSize), hub: newHub(o.MaxStreams),
		stats: newStats(), config: configCache{read: o.Configuration, schemas: o.Schemas, maxAge: o.ConfigMaxAge, now: o.Now}, started: o.Now()}
}

// Observe hands a finished request that ran admission to the dashboard:
// its captured trace entry, its admission record (done with: nothing
// writes to it any more) and how long it took. It never blocks: when Run
// is behind, the request is dropped and counted.
func (d *Dashboard) Observe(e *trace.Entry, rec *admission.Record, took time.Duration) {
	if e == nil {
		return
	}
	select {
	case d.queue <- finished{entry: e, rec: rec, took: took}:
	default:
		d.dropped.Add(1)
	}
}

// Run turns observed requests into statistics and stream events until ctx
// ends, then ends every open stream.
func (d *Dashboard) Run(ctx context.Context) {
	defer d.hub.close()
	for {
		select {
		case <-ctx.Done():
			return
		case f := <-d.queue:
			d.handle(f)
		}
	}
}

// handle counts one request's calls and streams its decision.
func (d *Dashboard) handle(f finished) {
	d.stats.add(f.rec, d.o.Now())
	d.hub.publish(decisionOf(f))
}

// configCache reads the configuration at most once per maxAge.
type configCache struct {
	read    func(context.Context) (*lint.Set, error)
	schemas lint.Schemas
	maxAge  time.Duration
	now     func() time.Time

	mu   sync.Mutex
	at   time.Time
	view *ConfigView
}

func (c *configCache) get(ctx context.Context) (*ConfigView, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.view != nil && c.now().Sub(c.at) < c.maxAge {
		return c.view, nil
	}
	set, err := c.read(ctx)
	if err != nil {
		return nil, err
	}
	now := c.now()
	c.view, c.at = viewOf(ctx, set, c.schemas, now), now
	return c.view, nil
}
