package webhooks

import (
	"fmt"
	"log/slog"

	"github.com/admitd/admitd/pkg/admission/internal/manifest"
)

// staticManifests keeps the plugin's static manifests, reloaded when the
// directory changes.
type staticManifests = manifest.Reloader[*manifestSet]

func newStaticManifests(dir string, mutating bool, checks manifestChecks, log *slog.Logger, observe func(error)) (*staticManifests, error) {
	load := func() (manifest.Loaded[*manifestSet], error) {
		set, err := loadManifests(dir, mutating, checks)
		if err != nil {
			return manifest.Loaded[*manifestSet]{}, err
		}
		return manifest.Loaded[*manifestSet]{Hash: set.hash, Value: set}, nil
	}
	r, err := manifest.NewReloader(load, log, "webhooks in "+dir, observe)
	if err != nil {
		return nil, fmt.Errorf("failed to load static webhook manifests from %q: %w", dir, err)
	}
	return r, nil
}

// reloadObserver reports the loads of the static manifests in the reload
// metrics under the plugin's name.
func (d *dispatcher) reloadObserver() func(error) {
	return func(err error) { d.metrics.ObserveManifestReload(d.name, err) }
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
	st := d.static.Get().Value
	if c := d.combined.Load(); c != nil && c.api == api && c.static == st {
		return c.snap
	}
	snap := combineSnapshots(st.mutating, api.mutatingConfigs, st.validating, api.validatingConfigs)
	d.combined.Store(&combined{api: api, static: st, snap: snap})
	return snap
}
