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

// adjustBorrowing sets each level's current limit, as upstream's
// updateBorrowing. With observe, the demand of the period just ended
// updates each level's statistics first. An exempt level keeps what it
// used at its peak (at least its minimum); the limited levels share the
// server's nominal seats, each between the lesser of its peak demand and
// its nominal limit (never below its minimum) and its maximum, in
// proportion to its smoothed demand; when what the exempt levels keep
// leaves too little, each limited level gets its minimum, or a part of the
// way from its minimum to its lower bound.
func (c *Controller) adjustBorrowing(observe bool) {
	type item struct {
		l     *level
		lower float64
	}
	nominalSum, remaining := 0, 0
	var items []item
	var bounds [][3]float64
	var minSum, lowerSum float64
	for _, l := range c.levels {
		nominalSum += l.nominal
		if observe {
			l.observeDemand(c.now())
		}
		if l.exempt {
			l.current = max(l.minimum, int(l.peak))
			l.target = float64(l.current)
			remaining -= l.current
			continue
		}
		lower := float64(max(l.minimum, min(l.nominal, int(l.peak))))
		l.target = math.Max(lower, l.smoothed)
		items = append(items, item{l: l, lower: lower})
		bounds = append(bounds, [3]float64{lower, float64(l.maximum), l.target})
		minSum += float64(l.minimum)
		lowerSum += lower
	}
	remaining += nominalSum
	c.fairFrac = 0
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
		shares, fairFrac, ok := allocate(float64(nominalSum), bounds)
		if !ok { // bounds that cannot meet the sum: limits stay
			break
		}
		c.fairFrac = fairFrac
		for i, a := range shares {
			items[i].l.current = int(math.Round(a))
		}
	}
	for _, l := range c.levels {
		if l.queues != nil {
			l.queues.setLimit(l.current)
		}
	}
}

// observeDemand ends the level's demand period: its high watermark, mean
// and deviation, and the smoothed envelope that forgets a peak slowly. A
// period of no length changes only the watermark.
func (l *level) observeDemand(now time.Time) {
	p := l.demand.reset(now)
	l.peak = math.Round(p.max)
	if !p.measured {
		return
	}
	l.demandAvg, l.demandStdDev = p.avg, p.stdDev
	envelope := p.avg + p.stdDev
	l.smoothed = math.Max(envelope, smoothingCoefficient*l.smoothed+(1-smoothingCoefficient)*envelope)
}

// minTarget replaces a smaller target, so that every item has a share.
const minTarget = 0.001

// allocate divides total among items given as [lower, upper, target]:
// item i gets clamp(target_i × f, lower_i, upper_i) for the one factor f
// (returned) that makes the shares sum to total, or every lower (upper)
// bound when they sum to total; ok is false when the lower bounds exceed
// total or the upper bounds fall short of it.
func allocate(total float64, items [][3]float64) (shares []float64, fairFrac float64, ok bool) {
	const epsilon = 1e-9
	var lowSum, highSum float64
	lowRatio, highRatio := math.Inf(1), math.Inf(-1)
	for _, it := range items {
		target := math.Max(it[2], minTarget)
		lowSum += it[0]
		highSum += it[1]
		lowRatio = math.Min(lowRatio, it[0]/target)
		highRatio = math.Max(highRatio, it[1]/target)
	}
	if lowSum-total > epsilon || total-highSum > epsilon {
		return nil, 0, false
	}
	shares = make([]float64, len(items))
	switch {
	case total == 0:
		return shares, 0, true
	case lowSum-total > -epsilon:
		for i, it := range items {
			shares[i] = it[0]
		}
		return shares, lowRatio, true
	case total-highSum > -epsilon:
		for i, it := range items {
			shares[i] = it[1]
		}
		return shares, highRatio, true
	}
	share := func(f float64) float64 {
		var sum float64
		for i, it := range items {
			shares[i] = math.Min(math.Max(math.Max(it[2], minTarget)*f, it[0]), it[1])
			sum += shares[i]
		}
		return sum
	}
	lo, hi := 0.0, 1.0
	for share(hi) < total && hi < 1e12 {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if share(mid) < total {
			lo = mid
		} else {
			hi = mid
		}
	}
	share(hi)
	return shares, hi, true
}
