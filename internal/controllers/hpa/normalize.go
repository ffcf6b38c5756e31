package hpa

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// history is what the controller remembers of an autoscaler between
// reconciliations, as upstream keeps it in memory: its recent unstabilized
// recommendations and its recent scale-ups and scale-downs.
type history struct {
	recommendations []recommendation
	scaleUps        []scaleEvent
	scaleDowns      []scaleEvent
}

type recommendation struct {
	replicas int32
	at       time.Time
}

type scaleEvent struct {
	change   int32 // how many replicas, never negative
	at       time.Time
	outdated bool
}

// historyOf is key's history, made when missing; c.mu is held.
func (c *Controller) historyOf(key string) *history {
	h := c.history[key]
	if h == nil {
		h = &history{}
		c.history[key] = h
	}
	return h
}

// recordInitialRecommendation remembers the current replicas as the first
// recommendation of an autoscaler that has none.
func (c *Controller) recordInitialRecommendation(key string, current int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.historyOf(key)
	if h.recommendations == nil {
		h.recommendations = []recommendation{{current, time.Now()}}
	}
}

// Scale-up limit without behavior: double the replicas, at least 4.
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

// normalize bounds the proposal of an autoscaler without behavior: the
// highest recommendation of the downscale stabilization window, then
// min/max replicas and the scale-up limit.
func (c *Controller) normalize(h *autoscalingv2.HorizontalPodAutoscaler, key string, current, proposed, minReplicas int32) int32 {
	stabilized := c.stabilize(key, proposed)
	if stabilized != proposed {
		setCondition(h, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation")
	} else {
		setCondition(h, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	desired, reason, message := limitWithRules(current, stabilized, minReplicas, h.Spec.MaxReplicas)
	setLimited(h, desired != stabilized, reason, message)
	return desired
}

func setLimited(h *autoscalingv2.HorizontalPodAutoscaler, limited bool, reason, message string) {
	status := corev1.ConditionFalse
	if limited {
		status = corev1.ConditionTrue
	}
	setCondition(h, autoscalingv2.ScalingLimited, status, reason, "%s", message)
}

// stabilize records proposed and returns the highest recommendation not
// older than the window, reusing one older slot for the new one.
func (c *Controller) stabilize(key string, proposed int32) int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.historyOf(key)
	highest := proposed
	old := -1
	cutoff := time.Now().Add(-c.downscale)
	for i, r := range h.recommendations {
		if r.at.Before(cutoff) {
			old = i
		} else if r.replicas > highest {
			highest = r.replicas
		}
	}
	h.record(old, proposed)
	return highest
}

// record stores a recommendation in slot old, or appends it when old is
// -1.
func (h *history) record(old int, replicas int32) {
	r := recommendation{replicas, time.Now()}
	if old >= 0 {
		h.recommendations[old] = r
		return
	}
	h.recommendations = append(h.recommendations, r)
}

func limitWithRules(current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	upLimit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
	maxAllowed, reason, message := maxReplicas, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
	if maxReplicas > upLimit {
		maxAllowed, reason, message = upLimit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
	}
	switch {
	case desired < minReplicas:
		return minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
	case desired > maxAllowed:
		return maxAllowed, reason, message
	}
	return desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}

// normalizeWithBehavior bounds the proposal of an autoscaler with
// behavior: its stabilization windows, then min/max replicas and its
// scaling policies.
func (c *Controller) normalizeWithBehavior(h *autoscalingv2.HorizontalPodAutoscaler, key string, current, proposed, minReplicas int32) int32 {
	b := h.Spec.Behavior
	if b.ScaleDown != nil && b.ScaleDown.StabilizationWindowSeconds == nil {
		w := int32(c.downscale.Seconds())
		b.ScaleDown.StabilizationWindowSeconds = &w
	}
	stabilized, reason, message := c.stabilizeWithBehavior(key, b, current, proposed)
	if stabilized != proposed {
		setCondition(h, autoscalingv2.AbleToScale, corev1.ConditionTrue, reason, "%s", message)
	} else {
		setCondition(h, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	desired, reason, message := c.limitWithBehavior(key, b, current, stabilized, minReplicas, h.Spec.MaxReplicas)
	setLimited(h, desired != stabilized, reason, message)
	return desired
}

// stabilizeWithBehavior keeps the proposal between the lowest
// recommendation of the scale-up window and the highest of the
// scale-down window (moving from current no further than they allow),
// recording the proposal.
func (c *Controller) stabilizeWithBehavior(key string, b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, proposed int32) (int32, string, string) {
	now := time.Now()
	upCutoff := now.Add(-time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second)
	downCutoff := now.Add(-time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second)
	up, down := proposed, proposed
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.historyOf(key)
	old := -1
	for i, r := range h.recommendations {
		if r.at.After(upCutoff) {
			up = min(up, r.replicas)
		}
		if r.at.After(downCutoff) {
			down = max(down, r.replicas)
		}
		if r.at.Before(upCutoff) && r.at.Before(downCutoff) {
			old = i
		}
	}
	stabilized := min(max(current, up), down)
	h.record(old, proposed)
	if proposed >= current {
		return stabilized, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation"
	}
	return stabilized, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
}

// limitWithBehavior bounds desired by max/min replicas and by how far the
// policies let the replicas move from where they were at the start of
// each policy's period.
func (c *Controller) limitWithBehavior(key string, b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.historyOf(key)
	switch {
	case desired > current:
		limit := max(scaleUpLimit(current, h.scaleUps, h.scaleDowns, b.ScaleUp), current)
		maxAllowed, reason, message := maxReplicas, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
		if maxAllowed > limit {
			maxAllowed, reason, message = limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
		}
		if desired > maxAllowed {
			return maxAllowed, reason, message
		}
	case desired < current:
		limit := min(scaleDownLimit(current, h.scaleUps, h.scaleDowns, b.ScaleDown), current)
		minAllowed, reason, message := minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
		if minAllowed < limit {
			minAllowed, reason, message = limit, "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate"
		}
		if desired < minAllowed {
			return minAllowed, reason, message
		}
	}
	return desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}

// changeWithin sums the changes of events within the last period seconds.
func changeWithin(periodSeconds int32, events []scaleEvent) int32 {
	cutoff := time.Now().Add(-time.Duration(periodSeconds) * time.Second)
	var n int32
	for _, e := range events {
		if e.at.After(cutoff) {
			n += e.change
		}
	}
	return n
}

// periodStart is the replicas at the start of a policy's period.
func periodStart(current int32, p autoscalingv2.HPAScalingPolicy, ups, downs []scaleEvent) int32 {
	return current - changeWithin(p.PeriodSeconds, ups) + changeWithin(p.PeriodSeconds, downs)
}

// scaleUpLimit is the most replicas the policies allow: the largest of
// their limits (the smallest under selectPolicy Min); current when
// disabled.
func scaleUpLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules) int32 {
	pick, result := maxOf, int32(math.MinInt32)
	switch *rules.SelectPolicy {
	case autoscalingv2.DisabledPolicySelect:
		return current
	case autoscalingv2.MinChangePolicySelect:
		pick, result = minOf, math.MaxInt32
	}
	for _, p := range rules.Policies {
		start := periodStart(current, p, ups, downs)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start + p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

// scaleDownLimit is the fewest replicas the policies allow: the smallest
// of their limits (the largest under selectPolicy Min); current when
// disabled.
func scaleDownLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules) int32 {
	pick, result := minOf, int32(math.MaxInt32)
	switch *rules.SelectPolicy {
	case autoscalingv2.DisabledPolicySelect:
		return current
	case autoscalingv2.MinChangePolicySelect:
		pick, result = maxOf, math.MinInt32
	}
	for _, p := range rules.Policies {
		start := periodStart(current, p, ups, downs)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

// storeScaleEvent remembers a rescale of an autoscaler with behavior,
// reusing the slot of an event older than the direction's longest policy
// period.
func (c *Controller) storeScaleEvent(b *autoscalingv2.HorizontalPodAutoscalerBehavior, key string, from, to int32) {
	if b == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.historyOf(key)
	events, rules, change := &h.scaleDowns, b.ScaleDown, from-to
	if to > from {
		events, rules, change = &h.scaleUps, b.ScaleUp, to-from
	}
	cutoff := time.Now().Add(-time.Duration(longestPeriod(rules)) * time.Second)
	old := -1
	for i := range *events {
		if (*events)[i].at.Before(cutoff) {
			(*events)[i].outdated = true
		}
		if (*events)[i].outdated {
			old = i
		}
	}
	e := scaleEvent{change: change, at: time.Now()}
	if old >= 0 {
		(*events)[old] = e
		return
	}
	*events = append(*events, e)
}

func longestPeriod(rules *autoscalingv2.HPAScalingRules) int32 {
	var longest int32
	for _, p := range rules.Policies {
		longest = max(longest, p.PeriodSeconds)
	}
	return longest
}

func minOf(a, b int32) int32 { return min(a, b) }
func maxOf(a, b int32) int32 { return max(a, b) }
