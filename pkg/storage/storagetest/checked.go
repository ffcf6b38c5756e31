package storagetest

import (
	"context"
	"fmt"
	"sync"

	"github.com/admitd/admitd/pkg/storage"
)

// checked wraps the store under test and records every revision it hands
// out, for checkInvariants.
type checked struct {
	storage.Store

	mu      sync.Mutex
	closed  bool
	maxSeen int64            // highest revision returned by any call
	writes  map[int64]string // revision -> successful write
	dups    []string         // writes that reused a revision
}

func (c *checked) seen(rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxSeen = max(c.maxSeen, rev)
}

func (c *checked) wrote(rev int64, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxSeen = max(c.maxSeen, rev)
	if prev, ok := c.writes[rev]; ok {
		c.dups = append(c.dups, fmt.Sprintf("revision %d: %s and %s", rev, prev, what))
	}
	c.writes[rev] = what
}

func (c *checked) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *checked) Create(ctx context.Context, key string, value []byte) (storage.KeyValue, error) {
	kv, err := c.Store.Create(ctx, key, value)
	if err == nil {
		c.wrote(kv.ModRevision, fmt.Sprintf("Create(%q)", key))
	}
	return kv, err
}

func (c *checked) Update(ctx context.Context, key string, value []byte, expectedRevision int64) (storage.KeyValue, error) {
	kv, err := c.Store.Update(ctx, key, value, expectedRevision)
	if err == nil {
		c.wrote(kv.ModRevision, fmt.Sprintf("Update(%q)", key))
	}
	return kv, err
}

func (c *checked) Delete(ctx context.Context, key string, expectedRevision int64) (storage.KeyValue, int64, error) {
	prev, rev, err := c.Store.Delete(ctx, key, expectedRevision)
	if err == nil {
		c.wrote(rev, fmt.Sprintf("Delete(%q)", key))
	}
	return prev, rev, err
}

func (c *checked) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	res, err := c.Store.List(ctx, prefix, opts)
	if err == nil {
		c.seen(res.Revision)
	}
	return res, err
}

func (c *checked) Revision(ctx context.Context) (int64, error) {
	rev, err := c.Store.Revision(ctx)
	if err == nil {
		c.seen(rev)
	}
	return rev, err
}

func (c *checked) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.Store.Close()
}
