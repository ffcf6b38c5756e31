package flowcontrol

import (
	"math"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	promext "k8s.io/component-base/metrics/prometheusextension"
)

// Upstream's time-weighted utilization series: each observes, at every
// instant, a count over the limit it is measured against.
var (
	requestUtilizationOpts = promext.TimingHistogramOpts{
		Name:    "apiserver_flowcontrol_priority_level_request_utilization",
		Help:    "[ALPHA] Observations, at the end of every nanosecond, of number of requests (as a fraction of the relevant limit) waiting or in any stage of execution (but only initial stage for WATCHes)",
		Buckets: []float64{0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 1},
	}
	demandSeatsOpts = promext.TimingHistogramOpts{
		Name:    "apiserver_flowcontrol_demand_seats",
		Help:    "[ALPHA] Observations, at the end of every nanosecond, of (the number of seats each priority level could use) / (nominal number of seats for that level)",
		Buckets: []float64{0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.7, 2, 2.8, 4, 6},
	}
	readVsWriteOpts = promext.TimingHistogramOpts{
		Name:    "apiserver_flowcontrol_read_vs_write_current_requests",
		Help:    "[ALPHA] Observations, at the end of every nanosecond, of the number of requests (as a fraction of the relevant limit) waiting or in regular stage of execution",
		Buckets: []float64{0, 0.001, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1},
	}
)

// levelSeries are one priority level's utilization histograms and its
// fair-queuing progress gauges (virtual time in seat-seconds), updated
// under its queue set's lock (an exempt level's under its own).
type levelSeries struct {
	seats, waiting, executing, demand promext.GaugeOps
	currentR, dispatchR, latestS      prometheus.Gauge
	nextS, nextDiscountedS            [2]prometheus.Gauge // min, max
	// zeroLimit is the denominator of a level whose limit is 0 (a tenth
	// of the server's seats, as upstream).
	zeroLimit float64
	// last are the ratios last observed (seats, executing, demand,
	// waiting): an unchanged one is not observed again (each observation
	// reads the clock).
	last [4]float64
}

// utilization is a level's state at one instant.
type utilization struct {
	seatsInUse, seatsAsked, executing, waiting int
	limit, waitingCapacity                     int
}

// note observes u.
func (s *levelSeries) note(u utilization) {
	if s == nil {
		return
	}
	limit := float64(u.limit)
	if u.limit <= 0 {
		limit = s.zeroLimit
	}
	now := [4]float64{float64(u.seatsInUse) / limit, float64(u.executing) / limit, float64(u.seatsAsked) / limit,
		float64(u.waiting) / float64(max(1, u.waitingCapacity))}
	for i, h := range [4]promext.GaugeOps{s.seats, s.executing, s.demand, s.waiting} {
		if now[i] != s.last[i] {
			h.Set(now[i])
			s.last[i] = now[i]
		}
	}
}

// noteR sets the current virtual time.
func (s *levelSeries) noteR(r seatSeconds) {
	if s != nil {
		s.currentR.Set(r.seconds())
	}
}

// noteDispatch sets the virtual times of a dispatch: now, the start of the
// dispatched request, and the bounds over the queues that had a request
// waiting of the start of their head, plain and less the work each queue
// has in progress.
func (s *levelSeries) noteDispatch(r, start seatSeconds, next, discounted [2]seatSeconds) {
	if s == nil {
		return
	}
	s.dispatchR.Set(r.seconds())
	s.latestS.Set(start.seconds())
	for i := range 2 {
		s.nextS[i].Set(next[i].seconds())
		s.nextDiscountedS[i].Set(discounted[i].seconds())
	}
}

// seconds is w in seat-seconds.
func (w seatSeconds) seconds() float64 { return float64(w) / seatSecondScale }

// levelSeriesSet makes each level's series once.
type levelSeriesSet struct {
	mu                              sync.Mutex
	byLevel                         map[string]*levelSeries
	requestUtilization, demandSeats *promext.TimingHistogramVec
	currentR, dispatchR, latestS    *prometheus.GaugeVec
	nextS, nextDiscountedS          *prometheus.GaugeVec
	serverLimit                     int
	readVsWrite                     *promext.TimingHistogramVec
	readWrite                       readWriteCounts
	seatUtilization                 *promext.TimingHistogramVec
}

func newLevelSeriesSet(serverLimit int) *levelSeriesSet {
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, append([]string{"priority_level"}, labels...))
	}
	s := &levelSeriesSet{byLevel: map[string]*levelSeries{}, serverLimit: serverLimit,
		seatUtilization:    promext.NewTimingHistogramVec(seatUtilizationOpts(), "priority_level"),
		requestUtilization: promext.NewTimingHistogramVec(requestUtilizationOpts, "phase", "priority_level"),
		demandSeats:        promext.NewTimingHistogramVec(demandSeatsOpts, "priority_level"),
		readVsWrite:        promext.NewTimingHistogramVec(readVsWriteOpts, "phase", "request_kind"),
		currentR:           gauge("apiserver_flowcontrol_current_r", "[ALPHA] R(time of last change)"),
		dispatchR:          gauge("apiserver_flowcontrol_dispatch_r", "[ALPHA] R(time of last dispatch)"),
		latestS:            gauge("apiserver_flowcontrol_latest_s", "[ALPHA] S(most recently dispatched request)"),
		nextS:              gauge("apiserver_flowcontrol_next_s_bounds", "[ALPHA] min and max, over queues, of S(oldest waiting request in queue)", "bound"),
		nextDiscountedS: gauge("apiserver_flowcontrol_next_discounted_s_bounds",
			"[ALPHA] min and max, over queues, of S(oldest waiting request in queue) - estimated work in progress", "bound"),
	}
	s.readWrite.init(s.readVsWrite)
	return s
}

func seatUtilizationOpts() promext.TimingHistogramOpts {
	return promext.TimingHistogramOpts{
		Name:        "apiserver_flowcontrol_priority_level_seat_utilization",
		Help:        "[ALPHA] Observations, at the end of every nanosecond, of utilization of seats for any stage of execution (but only initial stage for WATCHes)",
		Buckets:     []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1},
		ConstLabels: prometheus.Labels{"phase": "executing"},
	}
}

func (s *levelSeriesSet) collectors() []prometheus.Collector {
	return []prometheus.Collector{s.seatUtilization, s.requestUtilization, s.demandSeats, s.readVsWrite,
		s.currentR, s.dispatchR, s.latestS, s.nextS, s.nextDiscountedS}
}

// forLevel returns the level's series.
func (s *levelSeriesSet) forLevel(name string) *levelSeries {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ls := s.byLevel[name]; ls != nil {
		return ls
	}
	ls := &levelSeries{
		seats:     s.seatUtilization.WithLabelValues(name),
		waiting:   s.requestUtilization.WithLabelValues("waiting", name),
		executing: s.requestUtilization.WithLabelValues("executing", name),
		demand:    s.demandSeats.WithLabelValues(name),
		currentR:  s.currentR.WithLabelValues(name),
		dispatchR: s.dispatchR.WithLabelValues(name),
		latestS:   s.latestS.WithLabelValues(name),
		nextS:     [2]prometheus.Gauge{s.nextS.WithLabelValues(name, "min"), s.nextS.WithLabelValues(name, "max")},
		nextDiscountedS: [2]prometheus.Gauge{s.nextDiscountedS.WithLabelValues(name, "min"),
			s.nextDiscountedS.WithLabelValues(name, "max")},
		zeroLimit: math.Max(1, math.Round(float64(s.serverLimit)/10)),
	}
	s.byLevel[name] = ls
	return ls
}

// readWriteCounts are the server's read-only and mutating requests
// waiting and executing, each over what all levels can queue or seat.
type readWriteCounts struct {
	mu       sync.Mutex
	counts   [2][2]int // [phase][read-only, mutating]
	series   [2][2]promext.GaugeOps
	capacity [2]int // [phase]
}

const (
	phaseWaiting   = 0
	phaseExecuting = 1
)

func (c *readWriteCounts) init(vec *promext.TimingHistogramVec) {
	for phase, phaseName := range []string{"waiting", "executing"} {
		for kind, kindName := range []string{"readOnly", "mutating"} {
			c.series[phase][kind] = vec.WithLabelValues(phaseName, kindName)
		}
	}
	c.capacity = [2]int{1, 1}
}

// add changes the count of one phase and kind by delta.
func (c *readWriteCounts) add(phase int, readOnly bool, delta int) {
	kind := 1
	if readOnly {
		kind = 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[phase][kind] += delta
	c.observe(phase, kind)
}

// setCapacity sets the denominators: what all queues hold, and the
// server's nominal seats.
func (c *readWriteCounts) setCapacity(waiting, executing int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.capacity = [2]int{max(1, waiting), max(1, executing)}
	for phase := range 2 {
		for kind := range 2 {
			c.observe(phase, kind)
		}
	}
}

func (c *readWriteCounts) observe(phase, kind int) {
	c.series[phase][kind].Set(float64(c.counts[phase][kind]) / float64(c.capacity[phase]))
}
