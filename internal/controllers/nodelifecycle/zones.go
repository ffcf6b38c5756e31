package nodelifecycle

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
	nodetopology "k8s.io/component-helpers/node/topology"
	"k8s.io/utils/clock"
)

// zoneState is the health of a zone's nodes as a whole.
type zoneState string

const (
	stateInitial           zoneState = "Initial"
	stateNormal            zoneState = "Normal"
	stateFullDisruption    zoneState = "FullDisruption"
	statePartialDisruption zoneState = "PartialDisruption"
)

// timedNode is a node waiting in a taintQueue until processAt.
type timedNode struct {
	name, uid string
	processAt time.Time
}

// taintQueue holds the nodes of a zone waiting for their NoExecute taint,
// earliest first, tried at most at its limiter's rate (upstream's
// RateLimitedTimedQueue). A node stays known after it has been tried
// successfully, so that it is not queued again, until remove.
type taintQueue struct {
	mu      sync.Mutex
	waiting []timedNode
	known   map[string]bool
	limiter flowcontrol.RateLimiter
	clock   clock.WithTicker
}

// evictionBurst is upstream's EvictionRateLimiterBurst.
const evictionBurst = 1

// newTaintQueue's limiter is a token bucket even at rate 0, as upstream's:
// one node is then tainted, the bucket's first token, and no more.
func newTaintQueue(qps float32, clk clock.WithTicker) *taintQueue {
	return &taintQueue{known: map[string]bool{}, limiter: flowcontrol.NewTokenBucketRateLimiterWithClock(max(qps, 0), evictionBurst, clk), clock: clk}
}

func newLimiter(qps float32, clk clock.WithTicker) flowcontrol.RateLimiter {
	if qps <= 0 {
		return flowcontrol.NewFakeNeverRateLimiter()
	}
	return flowcontrol.NewTokenBucketRateLimiterWithClock(qps, evictionBurst, clk)
}

// add queues a node not known yet, to be tried now; false when known.
func (q *taintQueue) add(name, uid string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.known[name] {
		return false
	}
	q.known[name] = true
	q.insert(timedNode{name: name, uid: uid, processAt: q.clock.Now()})
	return true
}

// insert keeps waiting ordered by processAt, a later insertion after an
// earlier one of the same time.
func (q *taintQueue) insert(n timedNode) {
	i, _ := slices.BinarySearchFunc(q.waiting, n.processAt, func(w timedNode, at time.Time) int {
		if w.processAt.After(at) {
			return 1
		}
		return -1
	})
	q.waiting = slices.Insert(q.waiting, i, n)
}

// waitingAny says whether a node waits in the queue.
func (q *taintQueue) waitingAny() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting) > 0
}

// remove forgets a node, queued or not; false when it was not known.
func (q *taintQueue) remove(name string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.known[name] {
		return false
	}
	delete(q.known, name)
	q.waiting = slices.DeleteFunc(q.waiting, func(w timedNode) bool { return w.name == name })
	return true
}

// try calls taint for the nodes due, earliest first, while the limiter
// allows: a node taint succeeds for leaves the queue (and stays known),
// one it fails for is tried again after the delay it returns.
func (q *taintQueue) try(taint func(timedNode) (bool, time.Duration)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.waiting) > 0 {
		if !q.limiter.TryAccept() {
			return
		}
		now := q.clock.Now()
		head := q.waiting[0]
		if now.Before(head.processAt) {
			return
		}
		q.waiting = q.waiting[1:]
		if ok, wait := taint(head); !ok {
			head.processAt = now.Add(wait + 1)
			q.insert(head)
		}
	}
}

// swapLimiter changes the queue's rate; a limiter out of tokens leaves
// the new one out of tokens too (with a burst of one).
func (q *taintQueue) swapLimiter(qps float32) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.limiter.QPS() == qps {
		return
	}
	next := newLimiter(qps, q.clock)
	if qps > 0 && !q.limiter.TryAccept() {
		next.TryAccept()
	}
	q.limiter.Stop()
	q.limiter = next
}

// zoneOf is the zone key of a node: region and zone from its topology
// labels ("" without them).
func zoneOf(node *corev1.Node) string { return nodetopology.GetZoneKey(node) }

// excludedFromDisruption is a node labelled
// node.kubernetes.io/exclude-disruption: its health does not count in its
// zone's.
func excludedFromDisruption(node *corev1.Node) bool {
	_, ok := node.Labels["node.kubernetes.io/exclude-disruption"]
	return ok
}

// addZone gives the zone of node, when it has no state, the initial
// state and a new queue at the normal eviction rate (replacing the one it
// had, as upstream: a zone's queue outlives its state, which is dropped
// while the zone counts no node).
func (c *Controller) addZone(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := zoneOf(node)
	if _, ok := c.zoneStates[key]; !ok {
		c.zoneStates[key] = stateInitial
		c.tainters[key] = newTaintQueue(c.cfg.EvictionRate, c.clock)
		c.metrics.evicted(key, 0)
	}
}

func (c *Controller) zoneTainter(node *corev1.Node) *taintQueue {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tainters[zoneOf(node)]
}

// computeZoneState returns how many of a zone's nodes are not Ready and
// the zone's state: fully disrupted with none Ready, partially with more
// than two not Ready making at least the unhealthy-zone threshold, normal
// otherwise.
func (c *Controller) computeZoneState(ready []*corev1.NodeCondition) (int, zoneState) {
	readyNodes, notReady := 0, 0
	for _, cond := range ready {
		if cond != nil && cond.Status == corev1.ConditionTrue {
			readyNodes++
		} else {
			notReady++
		}
	}
	switch {
	case readyNodes == 0 && notReady > 0:
		return notReady, stateFullDisruption
	case notReady > 2 && float32(notReady)/float32(notReady+readyNodes) >= c.cfg.UnhealthyZoneThreshold:
		return notReady, statePartialDisruption
	default:
		return notReady, stateNormal
	}
}

// zoneRate is the tainting rate of a zone in state, of size nodes.
func (c *Controller) zoneRate(state zoneState, size int) float32 {
	switch state {
	case statePartialDisruption:
		if size > c.cfg.LargeClusterThreshold {
			return c.cfg.SecondaryEvictionRate
		}
		return 0
	default:
		return c.cfg.EvictionRate
	}
}

// handleDisruption moves the zones to their new states and their queues
// to the rates those call for: when every zone is fully disrupted the
// controller stops tainting and lifts the NoExecute taints (the control
// plane is more likely cut off than every node down); when that ends
// every node is given a fresh grace period. A zone that counted no node
// in this pass loses its state (and keeps its queue).
func (c *Controller) handleDisruption(ctx context.Context, readyByZone map[string][]*corev1.NodeCondition, nodes []*corev1.Node) {
	next := map[string]zoneState{}
	allFully := true
	for key, conds := range readyByZone {
		unhealthy, state := c.computeZoneState(conds)
		c.metrics.zone(key, len(conds), unhealthy)
		allFully = allFully && state == stateFullDisruption
		next[key] = state
	}
	c.mu.Lock()
	for key := range readyByZone {
		if _, ok := c.zoneStates[key]; !ok {
			c.zoneStates[key] = stateInitial
		}
	}
	wasFully := true
	for key, state := range c.zoneStates {
		if _, seen := readyByZone[key]; !seen {
			c.metrics.zone(key, 0, 0)
			delete(c.zoneStates, key)
			continue
		}
		if state != stateFullDisruption {
			wasFully = false
		}
	}
	current := maps.Clone(c.zoneStates)
	c.mu.Unlock()
	switch {
	case allFully && wasFully:
		return
	case allFully:
		c.log.Info("every node is not Ready: entering full disruption mode, tainting stops")
		for _, node := range nodes {
			if _, err := c.markReachable(ctx, node); err != nil {
				c.log.Warn("removing the NoExecute taints of a node", "node", node.Name, "err", err)
			}
		}
		c.moveZones(current, func(string, zoneState) (zoneState, bool) { return stateFullDisruption, true }, func(string) float32 { return 0 })
	case wasFully:
		c.log.Info("some nodes are Ready: leaving full disruption mode")
		now := c.clock.Now()
		c.mu.Lock()
		for _, node := range nodes {
			if h := c.health[node.Name]; h != nil {
				h.probe, h.readyTransition = now, now
			}
		}
		c.mu.Unlock()
		c.moveZones(current, func(key string, _ zoneState) (zoneState, bool) { return next[key], true },
			func(key string) float32 { return c.zoneRate(next[key], len(readyByZone[key])) })
	default:
		c.moveZones(current, func(key string, was zoneState) (zoneState, bool) {
			if was != next[key] {
				c.log.Info("zone changed state", "zone", key, "state", next[key])
			}
			return next[key], was != next[key]
		}, func(key string) float32 { return c.zoneRate(next[key], len(readyByZone[key])) })
	}
}

// moveZones sets each zone of states to the state to gives it and, when
// to says so, its queue to the rate rate gives it.
func (c *Controller) moveZones(states map[string]zoneState, to func(string, zoneState) (zoneState, bool), rate func(string) float32) {
	for key, was := range states {
		state, swap := to(key, was)
		c.mu.Lock()
		c.zoneStates[key] = state
		q := c.tainters[key]
		c.mu.Unlock()
		if swap && q != nil {
			q.swapLimiter(rate(key))
		}
	}
}
