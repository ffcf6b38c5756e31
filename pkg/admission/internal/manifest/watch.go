package manifest

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// settle is how long a burst of file system events is let finish before the
// directory is loaded again (an editor or a ConfigMap volume update writes
// several files and renames in a row).
const settle = 50 * time.Millisecond

// Watch reloads when dir or one of its immediate children changes, as
// upstream does with file system notifications, until ctx ends. The
// periodic recheck of Get remains the fallback, also for file systems that
// notify nothing. A watch that cannot be set up is logged, not fatal.
func (r *Reloader[T]) Watch(ctx context.Context, dir string) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		r.log.Warn("watching static manifests; relying on polling", "what", r.what, "err", err)
		return
	}
	if err := addTree(w, dir); err != nil {
		_ = w.Close()
		r.log.Warn("watching static manifests; relying on polling", "what", r.what, "err", err)
		return
	}
	go r.follow(ctx, w, dir)
}

// addTree watches dir and its immediate subdirectories (ConfigMap volumes
// swap a ..data symlink to a new directory).
func addTree(w *fsnotify.Watcher, dir string) error {
	if err := w.Add(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if info, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && info.IsDir() {
			_ = w.Add(filepath.Join(dir, e.Name())) // best effort: polling covers the rest
		}
	}
	return nil
}

// follow reloads after each settled burst of events.
func (r *Reloader[T]) follow(ctx context.Context, w *fsnotify.Watcher, dir string) {
	defer w.Close()
	settled := time.NewTimer(settle)
	settled.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-w.Events:
			if !ok {
				return
			}
			settled.Reset(settle)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			r.log.Warn("watching static manifests", "what", r.what, "err", err)
		case <-settled.C:
			_ = addTree(w, dir) // new subdirectories
			r.reloadNow()
		}
	}
}

// reloadNow loads the directory, or has the running load go once more.
func (r *Reloader[T]) reloadNow() {
	r.mu.Lock()
	if r.busy {
		r.again = true
		r.mu.Unlock()
		return
	}
	r.busy, r.checked = true, time.Now()
	r.mu.Unlock()
	r.reload()
}
