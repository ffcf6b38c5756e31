package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/admitd/admitd/pkg/storage"
)

// Get reads key (a linearizable read).
func (s *Store) Get(ctx context.Context, key string) (storage.KeyValue, error) {
	var resp *clientv3.GetResponse
	err := s.call(ctx, "get", false, func(ctx context.Context) (err error) {
		resp, err = s.client.Get(ctx, s.etcdKey(key))
		return err
	})
	if err != nil {
		return storage.KeyValue{}, err
	}
	if len(resp.Kvs) == 0 {
		return storage.KeyValue{}, storage.ErrNotFound
	}
	return s.kv(resp.Kvs[0]), nil
}

// List reads one page of the keys under prefix, at opts.Revision or the
// current revision, in one range request: etcd counts the keys from the
// start key to the end of the prefix, which gives RemainingCount.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if opts.StartKey != "" && !strings.HasPrefix(opts.StartKey, prefix) {
		return storage.ListResult{}, fmt.Errorf("storage: start key %q is not under prefix %q", opts.StartKey, prefix)
	}
	from := s.etcdKey(prefix)
	end := clientv3.GetPrefixRangeEnd(from)
	if opts.StartKey != "" {
		from = s.etcdKey(opts.StartKey)
	}
	ops := []clientv3.OpOption{clientv3.WithRange(end)}
	if opts.Limit > 0 {
		ops = append(ops, clientv3.WithLimit(opts.Limit))
	}
	if opts.Revision > 0 {
		ops = append(ops, clientv3.WithRev(s.etcdRev(opts.Revision)))
	}
	var resp *clientv3.GetResponse
	err := s.call(ctx, "list", false, func(ctx context.Context) (err error) {
		resp, err = s.client.Get(ctx, from, ops...)
		return err
	})
	if err != nil {
		return storage.ListResult{}, err
	}
	res := storage.ListResult{Items: make([]storage.KeyValue, len(resp.Kvs)), Revision: s.rev(resp.Header.Revision), More: resp.More}
	if opts.Revision > 0 {
		res.Revision = opts.Revision
	}
	for i, kv := range resp.Kvs {
		res.Items[i] = s.kv(kv)
	}
	if res.More {
		res.RemainingCount = resp.Count - int64(len(resp.Kvs))
	}
	return res, nil
}

// Compact discards the history before rev; etcd keeps the state at rev.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	return s.call(ctx, "compact", false, func(ctx context.Context) error {
		_, err := s.client.Compact(ctx, s.etcdRev(rev))
		return err
	})
}

// CompactedRevision asks etcd for its compacted revision: a read at the
// first revision succeeds while nothing is compacted; otherwise a watch
// from that revision is refused with the compacted revision.
func (s *Store) CompactedRevision(ctx context.Context) (int64, error) {
	first := s.etcdRev(0)
	if first < 1 {
		first = 1
	}
	err := s.call(ctx, "compacted revision", false, func(ctx context.Context) error {
		_, err := s.client.Get(ctx, s.probeKey(), clientv3.WithCountOnly(), clientv3.WithRev(first))
		return err
	})
	if err == nil || !errors.Is(err, storage.ErrCompacted) {
		return 0, err
	}
	var compacted int64
	err = s.call(ctx, "compacted revision", false, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for resp := range s.client.Watch(ctx, s.probeKey(), clientv3.WithRev(first)) {
			if resp.CompactRevision != 0 {
				compacted = s.rev(resp.CompactRevision)
				return nil
			}
			if err := resp.Err(); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
	return compacted, err
}
