package flowcontrol

import (
	"sync"
	"time"
)

// maxRetryAfter bounds the Retry-After a 429 suggests, in seconds.
const maxRetryAfter = 32

// droppedTracker chooses each level's Retry-After from its recent
// refusals, as upstream: it starts at 1 s, doubles (up to 32 s) when a
// level refused at least three times as many requests as the current
// value in the last that-many seconds, and shrinks by one second when
// fewer than that many were refused.
type droppedTracker struct {
	now    func() time.Time
	mu     sync.Mutex
	levels map[string]*droppedStats
}

type droppedStats struct {
	history      []secondCount // completed seconds, oldest first
	current      secondCount
	retryAfter   int64
	lastDoubling int64
}

type secondCount struct {
	unix  int64
	count int64
}

func newDroppedTracker(now func() time.Time) *droppedTracker {
	return &droppedTracker{now: now, levels: map[string]*droppedStats{}}
}

func (t *droppedTracker) record(level string) {
	now := t.now().Unix()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.levels[level]
	if s == nil {
		s = &droppedStats{retryAfter: 1}
		t.levels[level] = s
	}
	if s.current.unix == now {
		s.current.count++
		return
	}
	s.keep(s.current)
	s.current = secondCount{unix: now, count: 1}
	s.adjust(now)
}

// keep appends a finished second, forgetting what is older than twice the
// current Retry-After (at most 32 s).
func (s *droppedStats) keep(c secondCount) {
	s.history = append(s.history, c)
	horizon := min(2*s.retryAfter, maxRetryAfter)
	first := 0
	for first < len(s.history) && c.unix-s.history[first].unix > horizon {
		first++
	}
	s.history = s.history[first:]
}

func (s *droppedStats) adjust(now int64) {
	var dropped int64
	for i := len(s.history) - 1; i >= 0 && now-s.history[i].unix <= s.retryAfter; i-- {
		if s.history[i].unix < now {
			dropped += s.history[i].count
		}
	}
	switch {
	case now-s.lastDoubling >= s.retryAfter && dropped >= 3*s.retryAfter:
		s.retryAfter = min(2*s.retryAfter, maxRetryAfter)
		s.lastDoubling = now
	case dropped < s.retryAfter && s.retryAfter > 1:
		s.retryAfter--
	}
}

// retryAfter is the Retry-After, in seconds, for a refusal at level.
func (t *droppedTracker) retryAfter(level string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.levels[level]; s != nil {
		return s.retryAfter
	}
	return 1
}
