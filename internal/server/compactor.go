package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/admitd/admitd/pkg/storage"
)

// DefaultCompactionInterval is kube-apiserver's --etcd-compaction-interval
// default.
const DefaultCompactionInterval = 5 * time.Minute

// compactor trims the store's history as kube-apiserver has etcd do: at
// every tick it compacts to the revision the store had at the tick before,
// so that a list or watch at a revision stays answerable for at least one
// interval, and the history does not grow without end.
type compactor struct {
	store storage.Store
	log   *slog.Logger
	last  int64 // the revision seen at the previous tick
	// reading, when set, is the oldest revision a list or watch is still
	// reading pages at (0: none): compaction stays below it.
	reading func() int64
}

// run ticks every interval until ctx ends.
func (c *compactor) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.tick(ctx)
		}
	}
}

// tick compacts to the revision seen at the previous tick, if it is new,
// and remembers the current one.
func (c *compactor) tick(ctx context.Context) {
	rev, err := c.store.Revision(ctx)
	if err != nil {
		c.log.Error("compaction: reading the revision", "err", err)
		return
	}
	compacted, err := c.store.CompactedRevision(ctx)
	if err != nil {
		c.log.Error("compaction: reading the compacted revision", "err", err)
		return
	}
	target := c.last
	if c.reading != nil {
		if oldest := c.reading(); oldest > 0 && oldest <= target {
			target = oldest - 1
		}
	}
	if target > compacted {
		if err := c.store.Compact(ctx, target); err != nil {
			c.log.Error("compaction", "revision", target, "err", err)
			return
		}
		c.log.Debug("compacted", "revision", target)
	}
	c.last = rev
}
