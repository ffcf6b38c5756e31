package flowcontrol

import (
	"context"
	"math"
	"time"
)

// borrowingPeriod is how often the limits are re-divided by demand, as
// upstream.
const borrowingPeriod = 10 * time.Second

// smoothingCoefficient is how slowly a level's smoothed demand forgets a
// peak (upstream's 0.977 per period).
const smoothingCoefficient = 0.977

// Run re-divides the server's seats among the levels every ten seconds,
// until ctx ends: a level lends what it does not need, up to its lendable
// part, and a busy level borrows up to its borrowing limit.
func (c *Controller) Run(ctx context.Context) {
	tick := time.NewTicker(borrowingPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			c.mu.Lock()
			c.adjustBorrowing(true)
			c.mu.Unlock()
		}
	}
}

// adjustBorrowing sets each level's current limit. With observe, the
// demand of the period just ended updates each level's statistics first.
// An exempt level keeps what it used at its peak (at least its minimum);
// the limited levels share the rest, each between the lesser of its peak
// demand and its nominal limit (never below its minimum) and its maximum,
// in proportion to its smoothed demand.
func (c *Controller) adjustBorrowing(observe bool) {
	type item struct {
		l                    *level
		lower, upper, target float64
	}
	now := c.now()
	remaining := 0
	var items []item
	var minSum, lowerSum float64
	for _, l := range c.levels {
		remaining += l.nominal
		if observe {
			p := l.demand.reset(now)
			envelope := p.avg + p.stdDev
			l.smoothed = math.Max(envelope, smoothingCoefficient*l.smoothed+(1-smoothingCoefficient)*envelope)
			l.peak = math.Round(p.max)
		}
		peak := l.peak
		if l.exempt {
			l.current = max(l.minimum, int(peak))
			remaining -= l.current
			continue
		}
		lower := float64(max(l.minimum, min(l.nominal, int(peak))))
		items = append(items, item{l: l, lower: lower, upper: float64(l.maximum), target: math.Max(lower, l.smoothed)})
		minSum += float64(l.minimum)
		lowerSum += lower
	}
	switch {
	case float64(remaining) <= minSum:
		for _, it := range items {
			it.l.current = it.l.minimum
		}
	case float64(remaining) <= lowerSum:
		frac := (float64(remaining) - minSum) / (lowerSum - minSum)
		for _, it := range items {
			it.l.current = it.l.minimum + int(math.Round((it.lower-float64(it.l.minimum))*frac))
		}
	default:
		bounds := make([][3]float64, len(items))
		for i, it := range items {
			bounds[i] = [3]float64{it.lower, it.upper, it.target}
		}
		for i, a := range allocate(float64(remaining), bounds) {
			items[i].l.current = int(math.Round(a))
		}
	}
	for _, l := range c.levels {
		if l.queues != nil {
			l.queues.setLimit(l.current)
		}
	}
}

// allocate divides total among items given as [lower, upper, target]:
// item i gets clamp(target_i × f, lower_i, upper_i) for the one factor f
// that makes the shares sum to total (or every bound, when the bounds
// leave no choice).
func allocate(total float64, items [][3]float64) []float64 {
	share := func(f float64) ([]float64, float64) {
		out := make([]float64, len(items))
		var sum float64
		for i, it := range items {
			out[i] = math.Min(math.Max(math.Max(it[2], 0.001)*f, it[0]), it[1])
			sum += out[i]
		}
		return out, sum
	}
	lo, hi := 0.0, 1.0
	for _, s := share(hi); s < total && hi < 1e12; _, s = share(hi) {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if _, s := share(mid); s < total {
			lo = mid
		} else {
			hi = mid
		}
	}
	out, _ := share(hi)
	return out
}
