package server

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// authzConfigPoll is how often the file is read again even without a
// change event (a watch can miss a change on some file systems), as
// kube-apiserver checks its --authorization-config every minute.
const authzConfigPoll = time.Minute

// watch reloads the chain whenever the file changes, until ctx ends. An
// invalid new file is logged and the current chain kept, as upstream. The
// directory is watched so that a file replaced by rename (as editors and
// ConfigMap volumes do) is seen.
func (c *configuredAuthorizer) watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := w.Add(filepath.Dir(c.path)); err != nil {
		w.Close()
		return err
	}
	go func() {
		defer w.Close()
		tick := time.NewTicker(authzConfigPoll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-w.Events:
				if filepath.Clean(ev.Name) == filepath.Clean(c.path) {
					c.reload()
				}
			case err := <-w.Errors:
				c.log.Warn("watching the authorization config", "path", c.path, "err", err)
			case <-tick.C:
				c.reload()
			}
		}
	}()
	return nil
}

// reload loads the file again, logging the outcome.
func (c *configuredAuthorizer) reload() {
	changed, err := c.load()
	switch {
	case err != nil:
		c.log.Error("authorization config not reloaded, keeping the current one", "path", c.path, "err", err)
	case changed:
		c.log.Info("authorization config reloaded", "path", c.path)
	}
}
