package apiserver

import (
	"sync"
	"time"
)

// objectStatsTTL is how long an observation stands before a smaller one
// may replace it.
const objectStatsTTL = time.Minute

// objectStats are, per group and resource, the object count and average
// stored size the lists served observed: what flow control's seat
// estimate for a list reads (upstream reads storage's object counts).
// Within a minute an observation only grows the count, so a namespace's
// small list does not hide the resource's large one.
type objectStats struct {
	mu sync.Mutex
	m  map[[2]string]objectStat
}

type objectStat struct {
	count    int64
	avgBytes int64
	at       time.Time
}

// observe records a list's count (0: unknown) and average object size
// (negative: unknown; the last known one stays).
func (o *objectStats) observe(group, resource string, count, avgBytes int64, now time.Time) {
	if count <= 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[[2]string]objectStat{}
	}
	k := [2]string{group, resource}
	old, ok := o.m[k]
	if ok && now.Sub(old.at) < objectStatsTTL && old.count > count {
		return
	}
	if avgBytes < 0 {
		avgBytes = old.avgBytes
	}
	o.m[k] = objectStat{count: count, avgBytes: avgBytes, at: now}
}

func (o *objectStats) get(group, resource string) (count, avgBytes int64, known bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.m[[2]string{group, resource}]
	return s.count, s.avgBytes, ok
}
