package backgroundaudit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// follower watches the resources a scan read, from the revision it read
// each at, and hands their changes to the Run goroutine one at a time.
type follower struct {
	out    chan change
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// lost is set when a watch ended before it was stopped (it fell
	// behind, or its start was compacted): the ledger then misses
	// changes, and a rescan is due.
	lost atomic.Bool
}

// change is one storage event of a scanned resource.
type change struct {
	res *registry.Resource
	ev  storage.Event
}

// follow starts following the changes after the last scan.
func (s *Scanner) follow(ctx context.Context) *follower {
	ctx, cancel := context.WithCancel(ctx)
	f := &follower{out: make(chan change), cancel: cancel}
	for _, sr := range s.scanned {
		w, err := s.o.Store.Watch(ctx, layout.ResourcePrefix(sr.res), sr.rev)
		if err != nil {
			s.o.Logger.Warn("background audit: following changes", "resource", sr.res.GroupVersionResource, "err", err)
			f.lost.Store(true)
			continue
		}
		f.wg.Add(1)
		go f.forward(ctx, sr.res, w)
	}
	return f
}

// forward passes w's events on until ctx ends or w does.
func (f *follower) forward(ctx context.Context, res *registry.Resource, w storage.Watcher) {
	defer f.wg.Done()
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events():
			if !ok {
				f.lost.Store(ctx.Err() == nil)
				return
			}
			select {
			case f.out <- change{res: res, ev: ev}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// events is the channel of changes; nil (never ready) without a follower.
func (f *follower) events() <-chan change {
	if f == nil {
		return nil
	}
	return f.out
}

// broken says a watch was lost.
func (f *follower) broken() bool { return f != nil && f.lost.Load() }

// stop ends the watches and waits for their goroutines.
func (f *follower) stop() {
	if f == nil {
		return
	}
	f.cancel()
	f.wg.Wait()
}

// apply brings the ledger up to date with one change: a changed object is
// evaluated again (as a scan would, pause included), a deleted one
// forgotten.
func (s *Scanner) apply(ctx context.Context, c change) {
	key := c.ev.KV.Key
	if c.ev.Type == storage.EventDelete {
		s.ledger.remove(key)
		s.noteUpdate()
		return
	}
	obj, err := layout.Decode(c.res, c.ev.KV)
	if err != nil {
		s.o.Logger.Warn("background audit: decoding a change", "key", key, "err", err)
		return
	}
	ref, steps, err := s.evaluate(ctx, c.res, obj)
	if err != nil && ctx.Err() != nil {
		return
	}
	s.ledger.set(key, ref, steps, c.ev.PrevKV == nil)
	s.noteUpdate()
}

func (s *Scanner) noteUpdate() {
	s.updated, s.dirty = time.Now(), true
}

// publishIfChanged publishes the results when a change updated them.
func (s *Scanner) publishIfChanged(ctx context.Context) {
	if !s.dirty {
		return
	}
	if _, err := s.publish(ctx); err != nil && ctx.Err() == nil {
		s.o.Logger.Error("background audit", "err", err)
	}
}
