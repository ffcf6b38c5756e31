// Package bolt is admitd's embedded, default storage.Store: one bbolt file in
// the data directory, holding the current keys, the change log since the
// last compaction, and the revision counters, plus a write-ahead log beside
// it.
//
// Every acknowledged write is durable: concurrent writes are coalesced by a
// single writer goroutine into one record of the write-ahead log, appended
// and fdatasynced once (group commit). Like etcd's backend, the bbolt file
// is written in larger, less frequent checkpoints (every 100 ms, or sooner
// when many changes are pending); until then, reads see the pending changes
// through an in-memory overlay, and after a crash, Open replays the
// write-ahead log into the file.
//
// A list at a revision the file has reached is answered from the file's
// keys, corrected by undoing the changes its log bucket records after that
// revision; at a later revision, by applying the overlay's changes up to
// it. Watches replay the log bucket, then the overlay, then follow live
// events from an in-memory fanout.
//
// It is for a single admitd process: the data file is locked while open. For
// several API server instances sharing state, use the etcd backend.
package bolt

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/fanout"
)

// ErrInUse is returned by Open when another process holds the data file.
var ErrInUse = errors.New("bolt: data file is in use by another admitd process")

// Options tune a Store. The zero value is ready to use.
type Options struct {
	// LockTimeout is how long Open waits for another process to release the
	// data file before failing with ErrInUse. Default 100ms.
	LockTimeout time.Duration
	// MaxBatchSize is the most writes committed together, as one record of
	// the write-ahead log sharing one fdatasync. Default 1000.
	MaxBatchSize int
	// WatchBufferSize is how many events a watcher may lag behind the
	// writers before it is ended with fanout.ErrTooSlow. Default
	// fanout.DefaultBufferSize (1024).
	WatchBufferSize int
	// WatchCoalescing bounds the window within which changes are
	// delivered to watchers together (fanout.NewCoalescing, widened by
	// fanout.DefaultCoalescingPerWatcher per watcher): under a stream of writes each watcher wakes and writes to
	// its client once per window. Default 50ms; negative: each change at
	// once.
	WatchCoalescing time.Duration
	// CheckpointInterval is how long a change stays only in the
	// write-ahead log before it is written into the bbolt file (a failed
	// checkpoint is retried after as long again). Default 100ms.
	CheckpointInterval time.Duration
	// CheckpointEvents is how many pending changes start a checkpoint
	// at once. Default 10000.
	CheckpointEvents int
}

const (
	defaultLockTimeout        = 100 * time.Millisecond
	defaultMaxBatchSize       = 1000
	defaultCheckpointInterval = 100 * time.Millisecond
	defaultCheckpointEvents   = 10000
	defaultWatchCoalescing    = 50 * time.Millisecond
	// checkpointBytes of pending keys and values start a checkpoint.
	checkpointBytes = 16 << 20
	// compactChunk is the most log entries deleted in one transaction.
	compactChunk = 10000
)

// Store is a storage.Store backed by a bbolt file. Create one with Open.
type Store struct {
	db       *bbolt.DB
	path     string
	maxBatch int
	hub      *fanout.Hub

	wal                *walFiles
	epochs             walEpochs // as the data file has them; the writer's
	checkpointing      bool      // a checkpoint runs; it reports on checkpointed
	checkpointed       chan checkpointResult
	checkpointErr      error // how the last checkpoint failed
	overlay            *overlay
	checkpointInterval time.Duration
	checkpointEvents   int

	rev       atomic.Int64 // last committed revision; written by the writer only
	compacted atomic.Int64
	closed    atomic.Bool

	ops       chan *op        // writes waiting for the writer goroutine
	flushes   chan chan error // checkpoint requests (Compact)
	finalErr  error           // the writer's last checkpoint, set before stopped closes
	closing   chan struct{}   // closed by Close: the writer must stop
	stopped   chan struct{}   // closed by the writer when it has stopped
	closeOnce sync.Once
	closeErr  error
}

var _ storage.Store = (*Store)(nil)

// Open opens or creates the data file at path. It fails with an error
// wrapping ErrInUse, within opts.LockTimeout, if another process has it open.
func Open(path string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = defaultLockTimeout
	}
	if opts.MaxBatchSize <= 0 {
		opts.MaxBatchSize = defaultMaxBatchSize
	}
	if opts.CheckpointInterval <= 0 {
		opts.CheckpointInterval = defaultCheckpointInterval
	}
	if opts.CheckpointEvents <= 0 {
		opts.CheckpointEvents = defaultCheckpointEvents
	}
	if opts.WatchCoalescing == 0 {
		opts.WatchCoalescing = defaultWatchCoalescing
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout: opts.LockTimeout,
		// As etcd does: rebuild the freelist on open instead of writing it
		// on every commit.
		NoFreelistSync: true,
		FreelistType:   bbolt.FreelistMapType,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s (lock not released within %s)", ErrInUse, path, opts.LockTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	s := &Store{
		db:                 db,
		path:               path,
		maxBatch:           opts.MaxBatchSize,
		checkpointInterval: opts.CheckpointInterval,
		checkpointEvents:   opts.CheckpointEvents,
		ops:                make(chan *op),
		flushes:            make(chan chan error),
		checkpointed:       make(chan checkpointResult, 1),
		closing:            make(chan struct{}),
		stopped:            make(chan struct{}),
	}
	epochs, err := s.init()
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	if err := s.recover(path, epochs); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	s.hub = fanout.NewCoalescing(s.rev.Load(), opts.WatchBufferSize, fanout.DefaultCoalescingPerWatcher, max(opts.WatchCoalescing, 0))
	go s.run()
	return s, nil
}

// walEpochs are the epochs the data file names for the write-ahead log's
// records after its revision: cur's, then next's (see wal_files.go). A file
// from before the second log file has no next (0) until its first
// checkpoint; one from before epochs has neither.
type walEpochs struct{ cur, next uint64 }

// init creates the buckets of a new file and loads the revision counters
// and the log's epochs. A new file starts new epochs, so that no log left
// beside it by another file is read as its own.
func (s *Store) init() (epochs walEpochs, err error) {
	err = s.db.Update(func(tx *bbolt.Tx) error {
		fresh := tx.Bucket(bucketMeta) == nil
		for _, name := range [][]byte{bucketKV, bucketLog, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		rev, compacted := readMeta(tx)
		s.rev.Store(rev)
		s.compacted.Store(compacted)
		meta := tx.Bucket(bucketMeta)
		if !fresh {
			epochs = readEpochs(meta)
			return nil
		}
		epochs = walEpochs{cur: newEpoch(), next: newEpoch()}
		return putEpochs(meta, epochs)
	})
	return epochs, err
}

func readEpochs(meta *bbolt.Bucket) walEpochs {
	return walEpochs{cur: uint64(decodeRev(meta.Get(metaWALEpoch))), next: uint64(decodeRev(meta.Get(metaWALNext)))}
}

func putEpochs(meta *bbolt.Bucket, e walEpochs) error {
	if err := meta.Put(metaWALEpoch, encodeRev(int64(e.cur))); err != nil {
		return err
	}
	return meta.Put(metaWALNext, encodeRev(int64(e.next)))
}

// newEpoch is a random nonzero log epoch.
func newEpoch() uint64 {
	for {
		if e := rand.Uint64() &^ (1 << 63); e != 0 {
			return e
		}
	}
}

// recover opens the write-ahead log's files and writes the changes they
// hold beyond the file's revision into the file. Unless both files are
// empty (a clean shutdown), the data file moves to new epochs as it does
// (in the same transaction when there are changes), so that no stale
// record in either file is of an epoch written again; the writer starts in
// the first file.
func (s *Store) recover(path string, epochs walEpochs) error {
	base := s.rev.Load()
	w, events, err := openWALFiles(path, base, epochs.cur, epochs.next)
	if err != nil {
		return err
	}
	if len(events) > 0 || !w.empty() {
		last := base
		if len(events) > 0 {
			last = events[len(events)-1].KV.ModRevision
		}
		epochs = walEpochs{cur: newEpoch(), next: newEpoch()}
		if err := s.writeEvents(events, last, epochs); err != nil {
			_ = w.close()
			return err
		}
		s.rev.Store(last)
	}
	w.rewind(epochs.cur)
	s.wal, s.epochs, s.overlay = w, epochs, newOverlay(&s.rev)
	return nil
}

func readMeta(tx *bbolt.Tx) (rev, compacted int64) {
	meta := tx.Bucket(bucketMeta)
	return decodeRev(meta.Get(metaRev)), decodeRev(meta.Get(metaCompacted))
}

// view runs fn in a read transaction, mapping a closed database to ErrClosed.
func (s *Store) view(fn func(*bbolt.Tx) error) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	err := s.db.View(fn)
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return storage.ErrClosed
	}
	return err
}

// Get implements storage.Store.
func (s *Store) Get(_ context.Context, key string) (storage.KeyValue, error) {
	if s.closed.Load() {
		return storage.KeyValue{}, storage.ErrClosed
	}
	if kv, deleted, found := s.overlay.get(key); found {
		if deleted {
			return storage.KeyValue{}, fmt.Errorf("%w: %q", storage.ErrNotFound, key)
		}
		return kv, nil
	}
	var kv storage.KeyValue
	err := s.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketKV).Get([]byte(key))
		if b == nil {
			return fmt.Errorf("%w: %q", storage.ErrNotFound, key)
		}
		var err error
		kv, err = decodeRecord(key, b)
		return err
	})
	return kv, err
}

// Revision implements storage.Store.
func (s *Store) Revision(context.Context) (int64, error) {
	if s.closed.Load() {
		return 0, storage.ErrClosed
	}
	return s.rev.Load(), nil
}

// CompactedRevision implements storage.Store.
func (s *Store) CompactedRevision(context.Context) (int64, error) {
	if s.closed.Load() {
		return 0, storage.ErrClosed
	}
	return s.compacted.Load(), nil
}

// Compact implements storage.Store. Compacting at or below the compacted
// revision does nothing; compacting past the file's revision checkpoints
// first. The log bucket is trimmed in several transactions, so that a
// checkpoint (and the writes waiting on it) is held up by one at most; the
// compacted revision is recorded in the first.
func (s *Store) Compact(_ context.Context, rev int64) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if cur := s.rev.Load(); rev > cur {
		return fmt.Errorf("%w: compact at %d (current %d)", storage.ErrFutureRevision, rev, cur)
	}
	if rev > s.overlay.checkpointedRev() {
		if err := s.flush(); err != nil {
			return err
		}
	}
	for {
		more, advanced := false, false
		err := s.db.Update(func(tx *bbolt.Tx) error {
			cur, compacted := readMeta(tx)
			if rev > cur {
				return fmt.Errorf("%w: compact at %d (current %d)", storage.ErrFutureRevision, rev, cur)
			}
			if rev > compacted {
				if err := tx.Bucket(bucketMeta).Put(metaCompacted, encodeRev(rev)); err != nil {
					return err
				}
				advanced = true
			}
			var err error
			more, err = trimLog(tx.Bucket(bucketLog), rev)
			return err
		})
		if errors.Is(err, berrors.ErrDatabaseNotOpen) {
			return storage.ErrClosed
		}
		if err != nil {
			return err
		}
		if advanced {
			storeMax(&s.compacted, rev) // concurrent Compacts may finish out of order
		}
		if !more {
			return nil
		}
	}
}

// trimLog deletes up to compactChunk log entries at or below rev and reports
// whether more remain.
func trimLog(log *bbolt.Bucket, rev int64) (more bool, err error) {
	c := log.Cursor()
	n := 0
	for k, _ := c.First(); k != nil && decodeRev(k) <= rev; k, _ = c.First() {
		if n == compactChunk {
			return true, nil
		}
		if err := c.Delete(); err != nil {
			return false, err
		}
		n++
	}
	return false, nil
}

// Health reports whether the store can serve: its writer runs and its
// data file is open (the check behind the health endpoints' "etcd" on the
// embedded store).
func (s *Store) Health(context.Context) error {
	select {
	case <-s.stopped:
		return errors.New("bolt: the store is closed")
	default:
	}
	return s.db.View(func(*bbolt.Tx) error { return nil })
}

// Close implements storage.Store: it waits for the writes in flight, ends
// the watchers with storage.ErrClosed and closes the file. A second Close
// returns the result of the first.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		close(s.closing)
		<-s.stopped
		s.hub.Close()
		s.closeErr = errors.Join(s.finalErr, s.wal.close(), s.db.Close())
	})
	return s.closeErr
}

// storeMax raises v to n unless it is already higher.
func storeMax(v *atomic.Int64, n int64) {
	for cur := v.Load(); n > cur && !v.CompareAndSwap(cur, n); cur = v.Load() {
	}
}
