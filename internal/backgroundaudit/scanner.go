package backgroundaudit

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/pkg/admission"
	admcel "github.com/admitd/admitd/pkg/admission/cel"
	"github.com/admitd/admitd/pkg/admission/policies"
	"github.com/admitd/admitd/pkg/storage"
)

// Options configure a Scanner.
type Options struct {
	// Store and Catalogue are the server's storage and resources; the
	// scanner only reads the store.
	Store     storage.Store
	Catalogue *registry.Catalogue
	// Policies are the server's policies and bindings; Params its params.
	Policies policies.Source
	Params   policies.ParamSource
	// Namespaces, Schema and Authorizer are what the plugin reads
	// (admission.PluginContext's); a nil Authorizer leaves CEL's
	// authorizer unset.
	Namespaces admission.NamespaceLookup
	Schema     admission.Schema
	Authorizer admission.Authorizer
	// CEL compiles the policies; nil: a compiler of the scanner's own.
	CEL *admcel.Compiler
	// User is the request's user the policies see (request.userInfo, and
	// whom the CEL authorizer asks about).
	User authenticationv1.UserInfo
	// Interval is the longest time between two scans; 0 means
	// DefaultInterval.
	Interval time.Duration
	// Pause is the time waited after each object (the CPU bound); 0
	// means DefaultPause, negative none.
	Pause time.Duration
	// PageSize is how many stored objects are read at once; 0 means
	// DefaultPageSize.
	PageSize int64
	// CheckEvery is how often Run looks for a change of the policies,
	// bindings or params; 0 means a second.
	CheckEvery time.Duration
	// Publisher, when set, receives the results of every scan (the
	// PolicyReports).
	Publisher Publisher
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultInterval = 10 * time.Minute
	DefaultPause    = time.Millisecond
	DefaultPageSize = 100
)

// Publisher receives a scan's results.
type Publisher interface {
	Publish(ctx context.Context, r *Results) error
}

// Scanner is the background audit.
type Scanner struct {
	o      Options
	src    *auditSource
	plugin *policies.Validating
	last   atomic.Pointer[Results]

	// The last scan's ledger and what it read, when it finished, when a
	// followed change last updated it, and whether one has since the
	// results were last published (the Run or Scan goroutine's alone).
	ledger            *ledger
	scanned           []scannedResource
	finished, updated time.Time
	dirty             bool
}

// New returns a scanner over o; it scans once Run is called.
func New(o Options) (*Scanner, error) {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Pause == 0 {
		o.Pause = DefaultPause
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.CheckEvery <= 0 {
		o.CheckEvery = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Scanner{o: o, src: &auditSource{base: o.Policies}}
	plugin, err := policies.NewValidating(policies.Options{Source: s.src, Params: o.Params, CEL: o.CEL, Logger: o.Logger},
		admission.PluginContext{Namespaces: o.Namespaces, Schema: o.Schema, Authorizer: o.Authorizer})
	if err != nil {
		return nil, err
	}
	s.plugin = plugin
	s.last.Store(&Results{Bindings: []*BindingResult{}})
	return s, nil
}

// Results returns the last complete scan's results (empty before the
// first).
func (s *Scanner) Results() *Results { return s.last.Load() }

// Run scans at once, then follows the changes to the scanned resources
// (each changed object evaluated again, a deleted one forgotten; the
// results published again at most every CheckEvery), and scans again
// whenever the Audit bindings, their policies or their params change,
// when a change could not be followed, and at least every Interval, until
// ctx ends.
func (s *Scanner) Run(ctx context.Context) {
	var last fingerprint
	var lastScan time.Time
	var changes *follower
	defer func() { changes.stop() }()
	tick := time.NewTicker(s.o.CheckEvery)
	defer tick.Stop()
	due := true
	for {
		if due {
			changes.stop()
			changes = nil
			last, lastScan = s.fingerprint(ctx), time.Now()
			r, err := s.Scan(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				s.o.Logger.Error("background audit", "err", err)
			}
			if r != nil { // scanned (publishing may have failed)
				changes = s.follow(ctx)
			}
		}
		select {
		case <-ctx.Done():
			return
		case c := <-changes.events():
			s.apply(ctx, c)
			due = false
		case <-tick.C:
			s.publishIfChanged(ctx)
			fp := s.fingerprint(ctx)
			due = !fp.equal(last) || time.Since(lastScan) >= s.o.Interval || changes.broken()
		}
	}
}
