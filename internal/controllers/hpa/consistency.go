package hpa

import (
	"fmt"
	"strconv"
	"sync"
)

// consistency remembers the revision of each autoscaler's last status
// write, so a reconciliation waits (until the next sync period) while the
// autoscalers' cache has not seen it, instead of writing again from a
// stale copy and failing on a conflict; upstream's
// StaleControllerConsistencyHPA (on by default) does this with its
// informer's resourceVersion, counting each skip.
type consistency struct {
	mu      sync.Mutex
	seen    func() int64 // the revision the cache has seen
	pending map[string]int64
}

func (cs *consistency) wrote(key, resourceVersion string) {
	rev, err := strconv.ParseInt(resourceVersion, 10, 64)
	if err != nil {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if rev > cs.pending[key] {
		cs.pending[key] = rev
	}
}

// ensureCaughtUp is an error while the cache has not seen key's last
// write.
func (cs *consistency) ensureCaughtUp(key string) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	rev, ok := cs.pending[key]
	if !ok {
		return nil
	}
	if seen := cs.seen(); seen < rev {
		return fmt.Errorf("the horizontalpodautoscalers cache has seen revision %d, not yet %d", seen, rev)
	}
	delete(cs.pending, key)
	return nil
}

func (cs *consistency) forget(key string) {
	cs.mu.Lock()
	delete(cs.pending, key)
	cs.mu.Unlock()
}
