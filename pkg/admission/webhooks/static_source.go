package webhooks

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// manifestRecheck is how often the static manifest directory is checked
// for changes (upstream watches it and polls every minute).
const manifestRecheck = 2 * time.Second

// staticManifests keeps the configurations of a static manifest directory,
// reloading them in the background when the files change. A load that
// fails keeps the previous set.
type staticManifests struct {
	dir      string
	mutating bool
	checks   manifestChecks
	log      *slog.Logger

	current atomic.Pointer[manifestSet]
	mu      sync.Mutex
	checked time.Time
	busy    bool
}

func newStaticManifests(dir string, mutating bool, checks manifestChecks, log *slog.Logger) (*staticManifests, error) {
	set, err := loadManifests(dir, mutating, checks)
	if err != nil {
		return nil, fmt.Errorf("failed to load static webhook manifests from %q: %w", dir, err)
	}
	s := &staticManifests{dir: dir, mutating: mutating, checks: checks, log: log, checked: time.Now()}
	s.current.Store(set)
	return s, nil
}

// get returns the current set and starts a reload when it is due.
func (s *staticManifests) get() *manifestSet {
	s.mu.Lock()
	due := !s.busy && time.Since(s.checked) > manifestRecheck
	if due {
		s.busy, s.checked = true, time.Now()
	}
	s.mu.Unlock()
	if due {
		go s.reload()
	}
	return s.current.Load()
}

func (s *staticManifests) reload() {
	defer func() {
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}()
	set, err := loadManifests(s.dir, s.mutating, s.checks)
	if err != nil {
		s.log.Error("reloading static webhook manifests", "dir", s.dir, "err", err)
		return
	}
	if set.hash != s.current.Load().hash {
		s.current.Store(set)
		s.log.Info("reloaded static webhook manifests", "dir", s.dir, "hash", set.hash)
	}
}

// combined caches the effective snapshot for one pair of API snapshot and
// static manifest set.
type combined struct {
	api    *Snapshot
	static *manifestSet
	snap   *Snapshot
}

// snapshot returns the hooks to consider: static manifests first, then the
// API configurations.
func (d *dispatcher) snapshot() *Snapshot {
	api := d.source.Current()
	if d.static == nil {
		return api
	}
	st := d.static.get()
	if c := d.combined.Load(); c != nil && c.api == api && c.static == st {
		return c.snap
	}
	snap := combineSnapshots(st.mutating, api.mutatingConfigs, st.validating, api.validatingConfigs)
	d.combined.Store(&combined{api: api, static: st, snap: snap})
	return snap
}
