package storageversionmigrator

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/admitd/admitd/pkg/storage"
)

// follow lists prefix into c and then watches it from the listed
// revision, until ctx ends; when the watch fails it lists again (as the
// controllers package's followers do).
func follow(ctx context.Context, store storage.Store, prefix string, c *Controller, log *slog.Logger) {
	for ctx.Err() == nil {
		err := followOnce(ctx, store, prefix, c)
		if ctx.Err() != nil {
			return
		}
		if err != nil && !errors.Is(err, storage.ErrClosed) {
			log.Warn("watching storage, relisting", "prefix", prefix, "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func followOnce(ctx context.Context, store storage.Store, prefix string, c *Controller) error {
	page, err := store.List(ctx, prefix, storage.ListOptions{})
	if err != nil {
		return err
	}
	c.reset(page.Items)
	w, err := store.Watch(ctx, prefix, page.Revision)
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.Events() {
		c.event(ev)
	}
	return w.Err()
}
