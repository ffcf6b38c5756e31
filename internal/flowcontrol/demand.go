package flowcontrol

import (
	"math"
	"sync"
	"time"
)

// demandStats integrates a level's seat demand (seats in use plus seats
// waiting) over time, for the periodic borrowing adjustment.
type demandStats struct {
	mu       sync.Mutex
	value    float64
	since    time.Time
	start    time.Time
	integral float64 // of value dt
	squares  float64 // of value² dt
	max      float64
}

func newDemandStats(now time.Time) *demandStats {
	return &demandStats{since: now, start: now}
}

func (d *demandStats) set(now time.Time, v int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(now)
	d.value = float64(v)
	d.max = math.Max(d.max, d.value)
}

func (d *demandStats) advance(now time.Time) {
	dt := now.Sub(d.since).Seconds()
	if dt > 0 {
		d.integral += d.value * dt
		d.squares += d.value * d.value * dt
	}
	d.since = now
}

// demandPeriod is the demand of one adjustment period.
type demandPeriod struct {
	avg, stdDev, max float64
	// measured is false for a period of no length (avg and stdDev unset).
	measured bool
}

// reset returns the period since the last reset and starts a new one at
// the current value.
func (d *demandStats) reset(now time.Time) demandPeriod {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(now)
	p := demandPeriod{max: d.max}
	if span := now.Sub(d.start).Seconds(); span > 0 {
		p.avg = d.integral / span
		p.stdDev = math.Sqrt(math.Max(0, d.squares/span-p.avg*p.avg))
		p.measured = true
	}
	d.start, d.integral, d.squares, d.max = now, 0, 0, d.value
	return p
}
