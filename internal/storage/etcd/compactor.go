package etcd

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// compactRevKey is the key, outside any prefix, through which every
// kube-apiserver (and admitd) sharing an etcd agrees on who compacts: a
// write to it that expects its version claims the interval.
const compactRevKey = "compact_rev_key"

// RunCompactor compacts etcd every interval as kube-apiserver's compactor
// does, until ctx ends: at each tick it claims the interval by bumping the
// version of compact_rev_key (storing the revision it will compact to), and
// if the claim wins it compacts to the revision it saw at the tick before.
// So history is kept for at least one interval, and of several servers
// over one etcd only one compacts per interval.
func (s *Store) RunCompactor(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var version, rev int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var compacted int64
		var err error
		version, rev, compacted, err = s.compactTick(ctx, version, rev)
		switch {
		case err != nil:
			log.Error("etcd compaction", "err", err)
		case compacted != 0:
			log.Debug("etcd compacted", "revision", compacted)
		}
	}
}

// compactTick is one tick: expectVersion is compact_rev_key's version as
// last seen, rev the etcd revision seen at the last tick. It returns the
// new version and revision, and the revision compacted to (0: none).
func (s *Store) compactTick(ctx context.Context, expectVersion, rev int64) (version, current, compacted int64, err error) {
	var resp *clientv3.TxnResponse
	err = s.call(ctx, "compaction claim", true, func(ctx context.Context) (err error) {
		resp, err = s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.Version(compactRevKey), "=", expectVersion)).
			Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10))).
			Else(clientv3.OpGet(compactRevKey)).
			Commit()
		return err
	})
	if err != nil {
		return expectVersion, rev, 0, err
	}
	current = resp.Header.Revision
	if !resp.Succeeded { // another server claimed it: follow its version
		kvs := resp.Responses[0].GetResponseRange().GetKvs()
		if len(kvs) == 0 {
			return 0, current, 0, nil
		}
		return kvs[0].Version, current, 0, nil
	}
	if rev == 0 {
		return expectVersion + 1, current, 0, nil
	}
	err = s.call(ctx, "compaction", false, func(ctx context.Context) error {
		_, err := s.client.Compact(ctx, rev)
		return err
	})
	if err != nil {
		return expectVersion + 1, current, 0, err
	}
	return expectVersion + 1, current, rev, nil
}
