package flowcontrol

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
)

// maxSeatsShare is the part of a level's nominal limit one request may
// take (upstream's 15%), when the level queues.
const maxSeatsShare = 0.15

// Options configure a Controller.
type Options struct {
	// ServerConcurrencyLimit is the seats of the whole server, shared out
	// among the limited levels by their shares
	// (--max-requests-inflight + --max-mutating-requests-inflight).
	ServerConcurrencyLimit int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// QueueNote, when set, is told of each request that enters (delta 1)
	// or leaves (delta -1) a queue, read-only (get, list, watch) or not,
	// as upstream's filter notes them for apiserver_current_inqueue_requests.
	// It is called under a queue set's lock and must be quick.
	QueueNote func(readOnly bool, delta int)
}

// Controller classifies requests and holds each priority level's seats.
// Configure gives it the FlowSchemas and PriorityLevelConfigurations;
// Admit seats a request or refuses it.
type Controller struct {
	serverLimit int
	now         func() time.Time
	queueNote   func(readOnly bool, delta int)
	dropped     *droppedTracker
	metrics     *metrics

	mu      sync.RWMutex
	schemas []*flowcontrolv1.FlowSchema // in matching order
	levels  map[string]*level
	// quiescing are the limited levels removed from the configuration
	// while requests still waited or ran in them: nothing new is
	// classified to them, and they go once idle (as upstream's).
	quiescing map[string]*level
	// uidValues holds each schema's and level's UID as the one-element
	// header value every answer carries, made once per configuration.
	uidValues map[types.UID][]string
	// fairFrac is the factor of the last adjustment (seat_fair_frac).
	fairFrac float64
}

// level is one priority level's state.
type level struct {
	// config is the controller's lock, under which the level's
	// configuration (limits, series, demand observation) changes.
	config  *sync.RWMutex
	pl      *flowcontrolv1.PriorityLevelConfiguration
	exempt  bool
	nominal int // nominal concurrency limit (seats)
	minimum int // nominal less what it lends
	maximum int // nominal plus what it may borrow
	current int // the limit now, after borrowing and lending
	// maxSeats bounds one request's seats (0: the estimator's own bound).
	maxSeats int
	// shape is the queue set's queues, hand size and queue length limit.
	shape  [3]int
	queues *queueSet // nil when exempt
	demand *demandStats
	series *levelSeries // an exempt level's; a limited one's queue set has it
	now    func() time.Time
	// peak and smoothed are the seat demand of the last period: its high
	// watermark, and the smoothed envelope of its mean plus deviation.
	peak     float64
	smoothed float64
	// demandAvg and demandStdDev are the last period's mean and deviation.
	demandAvg, demandStdDev float64
	// target is the seats the last adjustment aimed at (the target_seats
	// series).
	target float64
	// exemptExecuting counts the requests an exempt level serves (the
	// debug dump's; a limited level's queue set counts its own), and
	// exemptSeats their estimated seats (its demand, which the borrowing
	// adjustment keeps for it).
	exemptExecuting atomic.Int64
	exemptSeatsMu   sync.Mutex
	exemptSeats     int
}

// exemptSeatsChanged adds delta seats to an exempt level's demand. It
// reads the level's configuration, so it holds the controller's lock for
// reading: a reconfiguration or borrowing adjustment never runs beside it.
func (l *level) exemptSeatsChanged(delta int) {
	l.config.RLock()
	defer l.config.RUnlock()
	l.exemptSeatsMu.Lock()
	defer l.exemptSeatsMu.Unlock()
	l.exemptSeats += delta
	l.demand.set(l.now(), l.exemptSeats)
	l.series.note(utilization{seatsInUse: l.exemptSeats, seatsAsked: l.exemptSeats, executing: int(l.exemptExecuting.Load()),
		limit: l.current})
}

// New returns a controller holding only the mandatory configuration until
// Configure is called.
func New(o Options) *Controller {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{serverLimit: o.ServerConcurrencyLimit, now: o.Now, queueNote: o.QueueNote, dropped: newDroppedTracker(o.Now),
		levels: map[string]*level{}}
	c.metrics = newMetrics(c)
	c.Configure(nil, nil)
	return c
}

// Configure replaces the configuration. Schemas naming a missing level are
// ignored (Dangling); the mandatory exempt and catch-all schemas and levels
// are imagined from the bootstrap configuration while absent, as upstream.
func (c *Controller) Configure(pls []*flowcontrolv1.PriorityLevelConfiguration, fss []*flowcontrolv1.FlowSchema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	desired := map[string]*flowcontrolv1.PriorityLevelConfiguration{}
	for _, pl := range pls {
		desired[pl.Name] = pl
	}
	for _, pl := range bootstrap.MandatoryPriorityLevelConfigurations {
		if desired[pl.Name] == nil {
			desired[pl.Name] = pl
		}
	}
	c.configureLevels(desired)
	c.schemas = c.matchingOrder(fss)
	c.uidValues = uidHeaderValues(c.schemas, c.levels)
	c.adjustBorrowing(false)
}

// uidHeaderValues is the header value of every schema's and level's UID,
// each capped at its length so that an append never writes into it.
func uidHeaderValues(schemas []*flowcontrolv1.FlowSchema, levels map[string]*level) map[types.UID][]string {
	values := make(map[types.UID][]string, len(schemas)+len(levels))
	for _, fs := range schemas {
		values[fs.UID] = []string{string(fs.UID)}[:1:1]
	}
	for _, l := range levels {
		values[l.pl.UID] = []string{string(l.pl.UID)}[:1:1]
	}
	return values
}

// configureLevels computes each level's limits from its shares.
func (c *Controller) configureLevels(desired map[string]*flowcontrolv1.PriorityLevelConfiguration) {
	var shareSum float64
	for _, pl := range desired {
		shares, _, _ := levelShares(pl)
		shareSum += float64(shares)
	}
	levels := make(map[string]*level, len(desired))
	for name, pl := range desired {
		l := c.levels[name]
		if l == nil {
			l = c.quiescing[name] // back before it went idle
			delete(c.quiescing, name)
		}
		if l == nil {
			l = &level{config: &c.mu, demand: newDemandStats(c.now()), now: c.now, current: -1}
		}
		l.pl, l.exempt = pl, pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt
		shares, lendable, borrowing := levelShares(pl)
		nominal := 0
		if shareSum > 0 {
			nominal = int(math.Ceil(float64(c.serverLimit) * float64(shares) / shareSum))
		}
		lend, borrow := 0, c.serverLimit
		if lendable != nil {
			lend = int(math.Round(float64(nominal) * float64(*lendable) / 100))
		}
		if borrowing != nil {
			borrow = int(math.Round(float64(nominal) * float64(*borrowing) / 100))
		}
		l.nominal, l.minimum, l.maximum = nominal, nominal-lend, nominal+borrow
		if l.current < 0 {
			l.current = nominal - lend/2
		}
		c.configureQueues(l)
		levels[name] = l
	}
	for name, l := range c.levels {
		if levels[name] == nil && l.queues != nil {
			if c.quiescing == nil {
				c.quiescing = map[string]*level{}
			}
			c.quiescing[name] = l
		}
	}
	c.levels = levels
	c.dropIdleQuiescing()
	c.metrics.levels.readWrite.setCapacity(capacities(levels))
}

// capacities are the requests all levels' queues hold and the seats of
// their nominal limits.
func capacities(levels map[string]*level) (waiting, executing int) {
	for _, l := range levels {
		executing += l.nominal
		if l.queues != nil {
			waiting += l.shape[0] * l.shape[2]
		}
	}
	return waiting, executing
}

// dropIdleQuiescing forgets the quiescing levels nothing waits or runs in.
func (c *Controller) dropIdleQuiescing() {
	for name, l := range c.quiescing {
		if l.queues.idle() {
			delete(c.quiescing, name)
		}
	}
}

// configureQueues sets a limited level's queue set and per-request bound.
func (c *Controller) configureQueues(l *level) {
	l.series = c.metrics.levels.forLevel(l.pl.Name)
	if l.exempt || l.pl.Spec.Limited == nil {
		l.queues, l.maxSeats = nil, 0
		return
	}
	var shape [3]int
	l.maxSeats = 0
	if q := l.pl.Spec.Limited.LimitResponse.Queuing; l.pl.Spec.Limited.LimitResponse.Type == flowcontrolv1.LimitResponseTypeQueue && q != nil {
		shape = [3]int{int(q.Queues), int(q.HandSize), int(q.QueueLengthLimit)}
		if !dealable(shape[0], shape[1]) {
			shape = [3]int{}
		}
		if shape[1] > 0 {
			l.maxSeats = max(1, min(int(math.Ceil(float64(l.nominal)*maxSeatsShare)), l.nominal/shape[1]))
		}
	}
	switch {
	case l.queues == nil:
		l.queues = newQueueSet(c.now, shape[0], shape[1], shape[2], l.current, l.demand)
		l.queues.series = l.series
	case shape != l.shape:
		l.queues.reconfigure(shape[0], shape[1], shape[2], l.current)
	}
	l.shape = shape
}

// levelShares are a level's nominal shares, lendable percent and borrowing
// limit percent (nil: unlimited).
func levelShares(pl *flowcontrolv1.PriorityLevelConfiguration) (int32, *int32, *int32) {
	if l := pl.Spec.Limited; l != nil {
		var shares int32
		if l.NominalConcurrencyShares != nil {
			shares = *l.NominalConcurrencyShares
		}
		return shares, l.LendablePercent, l.BorrowingLimitPercent
	}
	var shares int32
	if e := pl.Spec.Exempt; e != nil {
		if e.NominalConcurrencyShares != nil {
			shares = *e.NominalConcurrencyShares
		}
		return shares, e.LendablePercent, nil
	}
	return 0, nil, nil
}

// matchingOrder sorts the schemas whose level exists by precedence then
// name, with the mandatory exempt first and catch-all last when absent.
func (c *Controller) matchingOrder(fss []*flowcontrolv1.FlowSchema) []*flowcontrolv1.FlowSchema {
	var out []*flowcontrolv1.FlowSchema
	var haveExempt, haveCatchAll bool
	for _, fs := range fss {
		if c.levels[fs.Spec.PriorityLevelConfiguration.Name] == nil {
			continue
		}
		out = append(out, fs)
		haveExempt = haveExempt || fs.Name == flowcontrolv1.FlowSchemaNameExempt
		haveCatchAll = haveCatchAll || fs.Name == flowcontrolv1.FlowSchemaNameCatchAll
	}
	slices.SortStableFunc(out, func(a, b *flowcontrolv1.FlowSchema) int {
		return cmp.Or(cmp.Compare(a.Spec.MatchingPrecedence, b.Spec.MatchingPrecedence), cmp.Compare(a.Name, b.Name))
	})
	if !haveExempt {
		out = append([]*flowcontrolv1.FlowSchema{bootstrap.MandatoryFlowSchemaExempt}, out...)
	}
	if !haveCatchAll {
		out = append(out, bootstrap.MandatoryFlowSchemaCatchAll)
	}
	return out
}

// Dangling reports whether fs names a level that does not exist, as the
// status condition upstream writes on it.
func (c *Controller) Dangling(fs *flowcontrolv1.FlowSchema) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.levels[fs.Spec.PriorityLevelConfiguration.Name] == nil
}

// Classification is what a request was matched to.
type Classification struct {
	FlowSchema         string
	FlowSchemaUID      types.UID
	PriorityLevel      string
	PriorityLevelUID   types.UID
	FlowDistinguisher  string
	Exempt             bool
	distinguisherIsSet bool
	// uidValues are the schema's and the level's UIDs as header values.
	uidValues [2][]string
}

// UIDHeaderValues are the values of the X-Kubernetes-PF-FlowSchema-UID and
// X-Kubernetes-PF-PriorityLevel-UID headers, shared by every answer of the
// configuration: a caller may replace them but not write into them.
func (cl Classification) UIDHeaderValues() (flowSchema, priorityLevel []string) {
	flowSchema, priorityLevel = cl.uidValues[0], cl.uidValues[1]
	if flowSchema == nil {
		flowSchema = []string{string(cl.FlowSchemaUID)}
	}
	if priorityLevel == nil {
		priorityLevel = []string{string(cl.PriorityLevelUID)}
	}
	return flowSchema, priorityLevel
}

// classify returns the first schema matching d and its level.
func (c *Controller) classifyLocked(d *Digest) (*flowcontrolv1.FlowSchema, *level) {
	var catchAll *flowcontrolv1.FlowSchema
	for _, fs := range c.schemas {
		if matchesSchema(d, fs) {
			return fs, c.levels[fs.Spec.PriorityLevelConfiguration.Name]
		}
		if fs.Name == flowcontrolv1.FlowSchemaNameCatchAll {
			catchAll = fs
		}
	}
	return catchAll, c.levels[catchAll.Spec.PriorityLevelConfiguration.Name]
}

// Classify returns the schema and level d is served under.
func (c *Controller) Classify(d *Digest) Classification {
	c.mu.RLock()
	defer c.mu.RUnlock()
	fs, l := c.classifyLocked(d)
	return c.classification(d, fs, l)
}

func (c *Controller) classification(d *Digest, fs *flowcontrolv1.FlowSchema, l *level) Classification {
	cl := Classification{FlowSchema: fs.Name, FlowSchemaUID: fs.UID, PriorityLevel: l.pl.Name, PriorityLevelUID: l.pl.UID, Exempt: l.exempt,
		uidValues: [2][]string{c.uidValues[fs.UID], c.uidValues[l.pl.UID]}}
	if l.queues != nil && l.shape[0] > 1 {
		cl.FlowDistinguisher, cl.distinguisherIsSet = distinguisher(d, fs.Spec.DistinguisherMethod), true
	}
	return cl
}

// Estimator gives a classified request's work; maxSeats is the level's
// bound on one request (0: none beyond the estimator's own).
type Estimator func(cl Classification, maxSeats int) Estimate

// Estimate is a request's work as upstream's work estimator gives it:
// Seats while it runs, then FinalSeats held for AdditionalLatency once it
// has finished (the watch events a write sends). Watchers, when
// WatchersCounted, is the watch count a mutating request's estimate read.
type Estimate struct {
	Seats             int
	FinalSeats        int
	AdditionalLatency time.Duration
	Watchers          int
	WatchersCounted   bool
}

// MaxSeats is what the request occupies from its dispatch.
func (e Estimate) MaxSeats() int { return max(e.Seats, e.FinalSeats) }

// Admission is a seated request. Release gives its seats back (a watch
// releases once its initial events are sent); a second Release does
// nothing. It is not safe for concurrent use.
type Admission struct {
	Classification
	// Seats the request occupies (the most of its initial and final).
	Seats   int
	Waited  time.Duration
	flow    *flowMetrics
	level   *level
	ticket  *ticket // nil when exempt
	started time.Time
	watch   bool
	verb    string
	done    bool
}

// Release ends the request's execution; its seats go back now, or after
// the linger of its estimate.
func (a *Admission) Release() {
	if a == nil || a.done || a.flow == nil {
		return
	}
	a.done = true
	a.flow.executingDone(time.Since(a.started), a.watch, a.verb)
	if a.ticket != nil {
		a.ticket.finish()
		return
	}
	a.level.exemptExecuting.Add(-1)
	a.level.exemptSeatsChanged(-a.Seats)
	a.flow.seatsReleased(a.Seats)
}

// Rejection is a request refused: its classification, why, and the
// Retry-After seconds to answer.
type Rejection struct {
	Classification
	Reason     string
	RetryAfter int64
}

// Admit classifies d and waits, at most waitLimit and within ctx, for its
// seats; rejection is nil when it was seated.
func (c *Controller) Admit(ctx context.Context, d *Digest, waitLimit time.Duration, estimate Estimator) (a Admission, rejection *Rejection) {
	c.mu.RLock()
	fs, l := c.classifyLocked(d)
	a.Classification = c.classification(d, fs, l)
	qs, maxSeats, exempt := l.queues, l.maxSeats, l.exempt
	c.mu.RUnlock()
	a.flow, a.level = c.metrics.forFlow(&a.Classification), l

	a.watch, a.verb = d.Verb == "watch", d.Verb
	est := estimate(a.Classification, maxSeats)
	est.Seats = max(1, est.Seats)
	if est.WatchersCounted {
		a.flow.watchersSampled(est.Watchers)
	}
	a.Seats = est.MaxSeats()
	a.flow.estimatedSeats.Observe(float64(a.Seats))
	if exempt || qs == nil {
		// Seated at once; its seats count only as the level's demand.
		l.exemptExecuting.Add(1)
		l.exemptSeatsChanged(a.Seats)
		a.flow.dispatched.Inc()
		a.flow.executingStart(a.Seats, a.verb)
		a.started = time.Now()
		return a, nil
	}
	var hash uint64
	if a.distinguisherIsSet {
		hash = FlowHash(a.FlowSchema, a.FlowDistinguisher)
	}
	start := c.now()
	t, reason := qs.acquire(ctx, est, hash, waitLimit, a.flow, requestDesc{schema: a.FlowSchema, distinguisher: a.FlowDistinguisher, digest: *d})
	a.Waited = c.now().Sub(start)
	if t == nil {
		c.dropped.record(a.PriorityLevel)
		a.flow.rejected(reason, a.Waited)
		return Admission{}, &Rejection{Classification: a.Classification, Reason: reason, RetryAfter: c.dropped.retryAfter(a.PriorityLevel)}
	}
	a.ticket = t
	a.Seats = t.held // narrowed to the level's limit when wider
	a.flow.dispatched.Inc()
	a.flow.waitedServed.Observe(a.Waited.Seconds())
	a.flow.executingStart(a.Seats, a.verb)
	a.started = time.Now()
	return a, nil
}
