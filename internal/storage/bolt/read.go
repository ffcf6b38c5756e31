package bolt

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/admitd/admitd/pkg/storage"
)

// replayChunk is the most log entries one replay transaction reads, so that
// a slow watcher never holds a read transaction (and bbolt's remapping) open.
const replayChunk = 512

// List implements storage.Store. It reads in one transaction: the keys as
// they are now, corrected by the logged changes made after the revision
// asked for.
func (s *Store) List(_ context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	switch {
	case opts.Revision < 0:
		return storage.ListResult{}, fmt.Errorf("bolt: negative list revision %d", opts.Revision)
	case opts.Limit < 0:
		return storage.ListResult{}, fmt.Errorf("bolt: negative list limit %d", opts.Limit)
	case opts.StartKey != "" && !strings.HasPrefix(opts.StartKey, prefix):
		return storage.ListResult{}, fmt.Errorf("bolt: start key %q is not under prefix %q", opts.StartKey, prefix)
	}
	for {
		res, retry, err := s.list(prefix, opts)
		if !retry {
			return res, err
		}
	}
}

// list reads one page in one transaction. retry reports that a checkpoint
// ran since the transaction began, so the overlay no longer lines up with
// it.
func (s *Store) list(prefix string, opts storage.ListOptions) (res storage.ListResult, retry bool, err error) {
	err = s.view(func(tx *bbolt.Tx) error {
		inFile, compacted := readMeta(tx)
		cur := max(s.rev.Load(), inFile)
		rev := opts.Revision
		if rev == 0 {
			rev = cur
		}
		switch {
		case rev > cur:
			return fmt.Errorf("%w: %d (current %d)", storage.ErrFutureRevision, rev, cur)
		case rev < compacted:
			return fmt.Errorf("%w: %d (compacted %d)", storage.ErrCompacted, rev, compacted)
		}
		// The keys of the file, corrected to rev: back by undoing logged
		// changes, or forward by the pending ones.
		var fix map[string]*storage.KeyValue
		if rev <= inFile {
			var err error
			if fix, err = changedSince(tx.Bucket(bucketLog), prefix, rev); err != nil {
				return err
			}
		} else if fix, retry = s.overlay.changes(prefix, inFile, rev); !retry {
			retry = true
			return nil
		} else {
			retry = false
		}
		start := max(prefix, opts.StartKey)
		it := newSnapshotIter(tx.Bucket(bucketKV).Cursor(), prefix, start, fix)
		var err error
		res, err = readPage(it, opts.Limit, opts.NoRemainingCount, opts.HaveValue)
		res.Revision = rev
		return err
	})
	return res, retry, err
}

// changedSince returns, for every key under prefix changed after rev, its
// value at rev (nil if it did not exist then). The first logged change after
// rev holds that value as its previous value.
func changedSince(log *bbolt.Bucket, prefix string, rev int64) (map[string]*storage.KeyValue, error) {
	undo := make(map[string]*storage.KeyValue)
	p := []byte(prefix)
	c := log.Cursor()
	for k, v := c.Seek(encodeRev(rev + 1)); k != nil; k, v = c.Next() {
		key, err := eventKey(v)
		if err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(key, p) {
			continue
		}
		if _, seen := undo[string(key)]; seen {
			continue
		}
		ev, err := decodeEvent(decodeRev(k), v)
		if err != nil {
			return nil, err
		}
		undo[ev.KV.Key] = ev.PrevKV
	}
	return undo, nil
}

// readPage collects up to limit items (0: all) and counts the rest.
func readPage(it *snapshotIter, limit int64, noCount bool, have func(string, int64) bool) (storage.ListResult, error) {
	var res storage.ListResult
	for {
		key, raw, old, ok := it.next()
		if !ok {
			break
		}
		if limit > 0 && int64(len(res.Items)) == limit {
			res.RemainingCount++
			if noCount {
				break // one key beyond the page is enough to know there is more
			}
			continue
		}
		kv := old
		if kv == nil {
			decoded, err := decodeRecordHaving(key, raw, have)
			if err != nil {
				return storage.ListResult{}, err
			}
			kv = &decoded
		}
		res.Items = append(res.Items, *kv)
	}
	res.More = res.RemainingCount > 0
	return res, nil
}

// snapshotIter walks the keys under a prefix as they were at some
// revision: it merges the keys of the file (a kv cursor) with the keys whose
// value at that revision differs (undo), in key order.
type snapshotIter struct {
	c        *bbolt.Cursor
	prefix   []byte
	ck, cv   []byte   // the cursor's position; ck nil when done
	undoKeys []string // sorted keys of undo not yet visited
	undo     map[string]*storage.KeyValue
}

func newSnapshotIter(c *bbolt.Cursor, prefix, start string, undo map[string]*storage.KeyValue) *snapshotIter {
	it := &snapshotIter{c: c, prefix: []byte(prefix), undo: undo}
	for k := range undo {
		if k >= start {
			it.undoKeys = append(it.undoKeys, k)
		}
	}
	slices.Sort(it.undoKeys)
	it.ck, it.cv = c.Seek([]byte(start))
	it.skipForeign()
	return it
}

// skipForeign ends the cursor walk when it leaves the prefix.
func (it *snapshotIter) skipForeign() {
	if it.ck != nil && !bytes.HasPrefix(it.ck, it.prefix) {
		it.ck, it.cv = nil, nil
	}
}

func (it *snapshotIter) advance() {
	it.ck, it.cv = it.c.Next()
	it.skipForeign()
}

// next returns the next visible key with either its current record (raw,
// valid only in the transaction) or its past value (old).
func (it *snapshotIter) next() (key string, raw []byte, old *storage.KeyValue, ok bool) {
	for {
		switch {
		case len(it.undoKeys) > 0 && (it.ck == nil || it.undoKeys[0] <= string(it.ck)):
			key = it.undoKeys[0]
			it.undoKeys = it.undoKeys[1:]
			if it.ck != nil && key == string(it.ck) {
				it.advance() // the current record is superseded
			}
			if old = it.undo[key]; old == nil {
				continue // did not exist at the revision
			}
			return key, nil, old, true
		case it.ck != nil:
			key, raw = string(it.ck), it.cv
			it.advance()
			return key, raw, nil, true
		default:
			return "", nil, nil, false
		}
	}
}

// Watch implements storage.Store.
func (s *Store) Watch(ctx context.Context, prefix string, afterRevision int64) (storage.Watcher, error) {
	switch {
	case s.closed.Load():
		return nil, storage.ErrClosed
	case afterRevision < 0:
		return nil, fmt.Errorf("bolt: negative watch revision %d", afterRevision)
	case afterRevision != 0 && afterRevision < s.compacted.Load():
		return nil, fmt.Errorf("%w: watch after %d (compacted %d)", storage.ErrCompacted, afterRevision, s.compacted.Load())
	}
	return s.hub.Watch(ctx, prefix, afterRevision, s.replay)
}

// replay implements fanout.Replay: from the log bucket in short
// transactions, then from the overlay for the changes not checkpointed yet.
func (s *Store) replay(prefix string, after, upTo int64, emit func(storage.Event) bool) error {
	for next := after + 1; next <= upTo; {
		if events, ok := s.overlay.since(prefix, next, upTo); ok {
			for _, ev := range events {
				if !emit(ev) {
					return nil
				}
			}
			return nil
		}
		var events []storage.Event
		from := next
		err := s.view(func(tx *bbolt.Tx) error {
			inFile, compacted := readMeta(tx)
			if next <= compacted {
				return fmt.Errorf("%w: watch after %d (compacted %d)", storage.ErrCompacted, next-1, compacted)
			}
			var err error
			events, next, err = readLog(tx.Bucket(bucketLog), prefix, next, min(upTo, inFile))
			return err
		})
		if err != nil {
			return err
		}
		if next == from {
			return fmt.Errorf("bolt: revision %d is neither in the file nor pending", from)
		}
		for _, ev := range events {
			if !emit(ev) {
				return nil
			}
		}
	}
	return nil
}

// readLog reads up to replayChunk log entries from revision from to upTo and
// returns those under prefix and the revision to read next.
func readLog(log *bbolt.Bucket, prefix string, from, upTo int64) ([]storage.Event, int64, error) {
	var events []storage.Event
	p := []byte(prefix)
	c := log.Cursor()
	k, v := c.Seek(encodeRev(from))
	for n := 0; n < replayChunk; n++ {
		if k == nil || decodeRev(k) > upTo {
			return events, upTo + 1, nil
		}
		rev := decodeRev(k)
		key, err := eventKey(v)
		if err != nil {
			return nil, 0, err
		}
		if bytes.HasPrefix(key, p) {
			ev, err := decodeEvent(rev, v)
			if err != nil {
				return nil, 0, err
			}
			events = append(events, ev)
		}
		from = rev + 1
		k, v = c.Next()
	}
	return events, from, nil
}
