package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/admitd/admitd/pkg/storage"
)

type opKind uint8

const (
	opCreate opKind = iota
	opUpdate
	opDelete
)

// op is one write waiting for the writer goroutine. The writer sets event
// (the committed change) or err, then closes done.
type op struct {
	kind     opKind
	key      string
	value    []byte // a private copy
	expected int64

	event storage.Event
	err   error
	done  chan struct{}
}

// Create implements storage.Store.
func (s *Store) Create(ctx context.Context, key string, value []byte) (storage.KeyValue, error) {
	o := &op{kind: opCreate, key: key, value: bytes.Clone(value)}
	if err := s.submit(ctx, o); err != nil {
		return storage.KeyValue{}, err
	}
	kv := o.event.KV
	kv.Value = value
	return kv, nil
}

// Update implements storage.Store.
func (s *Store) Update(ctx context.Context, key string, value []byte, expectedRevision int64) (storage.KeyValue, error) {
	o := &op{kind: opUpdate, key: key, value: bytes.Clone(value), expected: expectedRevision}
	if err := s.submit(ctx, o); err != nil {
		return storage.KeyValue{}, err
	}
	kv := o.event.KV
	kv.Value = value
	return kv, nil
}

// Delete implements storage.Store.
func (s *Store) Delete(ctx context.Context, key string, expectedRevision int64) (storage.KeyValue, int64, error) {
	o := &op{kind: opDelete, key: key, expected: expectedRevision}
	if err := s.submit(ctx, o); err != nil {
		return storage.KeyValue{}, 0, err
	}
	prev := *o.event.PrevKV // shared with watchers: hand out a copy
	prev.Value = bytes.Clone(prev.Value)
	return prev, o.event.KV.ModRevision, nil
}

// submit hands o to the writer and waits until it is committed or refused.
// Once handed over, a write is not abandoned when ctx ends, so that an error
// means the write did not happen — except one wrapping errOutcomeUnknown
// (the disk failed a sync), after which the store accepts no more writes.
func (s *Store) submit(ctx context.Context, o *op) error {
	switch {
	case o.key == "":
		return errors.New("bolt: empty key")
	case len(o.key) > bbolt.MaxKeySize:
		return fmt.Errorf("bolt: key of %d bytes is longer than %d", len(o.key), bbolt.MaxKeySize)
	case s.closed.Load():
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	o.done = make(chan struct{})
	select {
	case s.ops <- o:
	case <-s.closing:
		return storage.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	<-o.done
	return o.err
}

// run is the writer goroutine: it takes the first waiting write, adds every
// other write already waiting, and commits them all with one log append.
// It starts a checkpoint of the log into the bbolt file when enough has
// gathered, when the oldest pending change is checkpointInterval old, when
// asked by Compact, and before it stops; a checkpoint runs beside the
// writes (see wal_files.go), one at a time.
func (s *Store) run() {
	defer close(s.stopped)
	batch := make([]*op, 0, s.maxBatch)
	timer := newCheckpointTimer(s.checkpointInterval)
	for {
		select {
		case o := <-s.ops:
			batch = s.gather(append(batch[:0], o))
			s.commit(batch)
			clear(batch)
			s.checkpointIfDue(timer)
		case <-timer.C():
			timer.fired()
			s.startCheckpoint()
			s.checkpointIfDue(timer)
		case res := <-s.checkpointed:
			s.endCheckpoint(res)
			s.checkpointIfDue(timer)
		case reply := <-s.flushes:
			reply <- s.checkpointAll()
		case <-s.closing:
			s.finalErr = s.checkpointAll()
			if s.finalErr == nil {
				s.finalErr = s.wal.clear()
			}
			return
		}
	}
}

// gather adds the writes already waiting to batch, up to the batch size.
func (s *Store) gather(batch []*op) []*op {
	// Let the writers woken by the last commit queue up again, so that
	// they join this batch instead of waiting for the next.
	runtime.Gosched()
	for len(batch) < s.maxBatch {
		select {
		case o := <-s.ops:
			batch = append(batch, o)
		default:
			return batch
		}
	}
	return batch
}

// checkpointIfDue starts a checkpoint at once when enough changes are
// pending, and otherwise makes sure the timer will. A failed checkpoint is
// retried by the timer only: at once, it would be tried again as soon as
// it failed, over and over (it runs beside the writes).
func (s *Store) checkpointIfDue(timer *checkpointTimer) {
	if n, size := s.overlay.size(); s.checkpointErr == nil && (n >= s.checkpointEvents || size >= checkpointBytes) {
		s.startCheckpoint()
	}
	if n, _ := s.overlay.size(); n > 0 || s.checkpointErr != nil {
		timer.arm()
	}
}

// checkpointTimer fires one interval after it is armed; arming it again
// before then does not postpone it.
type checkpointTimer struct {
	t        *time.Timer
	interval time.Duration
	armed    bool
}

func newCheckpointTimer(interval time.Duration) *checkpointTimer {
	t := time.NewTimer(interval)
	t.Stop()
	return &checkpointTimer{t: t, interval: interval}
}

func (c *checkpointTimer) C() <-chan time.Time { return c.t.C }

func (c *checkpointTimer) arm() {
	if !c.armed {
		c.t.Reset(c.interval)
		c.armed = true
	}
}

func (c *checkpointTimer) fired() { c.armed = false }

// errNothingWritten marks a batch in which every write was refused.
var errNothingWritten = errors.New("nothing written")

// commit decides a batch against the current state, appends its changes to
// the write-ahead log, then publishes them and wakes its writers. A write
// refused for a logical reason (ErrKeyExists, ErrNotFound, ErrConflict) does
// not affect the others; a storage failure fails the whole batch and
// advances nothing.
func (s *Store) commit(batch []*op) {
	rev := s.rev.Load()
	events, err := s.decide(batch, rev)
	if err == nil {
		err = s.wal.append(rev+1, events)
	}
	switch {
	case errors.Is(err, errNothingWritten):
	case err != nil:
		for _, o := range batch {
			o.err = fmt.Errorf("bolt: commit: %w", err)
		}
	default:
		s.overlay.add(events) // advances s.rev
		s.hub.Publish(events)
	}
	for _, o := range batch {
		close(o.done)
	}
}

// decide gives each write of a batch its event as revision rev+1, rev+2, …
// or its refusal, each write seeing those before it.
func (s *Store) decide(batch []*op, rev int64) ([]storage.Event, error) {
	tx, err := s.db.Begin(false)
	if err != nil {
		if errors.Is(err, berrors.ErrDatabaseNotOpen) {
			err = storage.ErrClosed
		}
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	kvs := tx.Bucket(bucketKV)
	inBatch := make(map[string]*storage.KeyValue, len(batch)) // nil: deleted in this batch
	current := func(key string) (*storage.KeyValue, error) {
		if kv, ok := inBatch[key]; ok {
			return kv, nil
		}
		if kv, deleted, found := s.overlay.get(key); found {
			if deleted {
				return nil, nil
			}
			return &kv, nil
		}
		b := kvs.Get([]byte(key))
		if b == nil {
			return nil, nil
		}
		kv, err := decodeRecord(key, b)
		return &kv, err
	}
	var events []storage.Event
	for _, o := range batch {
		prev, err := current(o.key)
		if err != nil {
			return nil, err
		}
		if o.err = decideOne(o, prev, rev+int64(len(events))+1); o.err != nil {
			continue
		}
		events = append(events, o.event)
		if o.event.Type == storage.EventDelete {
			inBatch[o.key] = nil
		} else {
			inBatch[o.key] = &o.event.KV
		}
	}
	if len(events) == 0 {
		return nil, errNothingWritten
	}
	return events, nil
}

// decideOne sets o's event as revision rev given the key's current value
// (nil: absent), or returns the logical reason o cannot be applied.
func decideOne(o *op, prev *storage.KeyValue, rev int64) error {
	switch {
	case o.kind == opCreate && prev != nil:
		return fmt.Errorf("%w: %q", storage.ErrKeyExists, o.key)
	case o.kind == opCreate:
		o.event = storage.Event{Type: storage.EventPut,
			KV: storage.KeyValue{Key: o.key, Value: o.value, CreateRevision: rev, ModRevision: rev}}
	case prev == nil:
		return fmt.Errorf("%w: %q", storage.ErrNotFound, o.key)
	case o.expected != 0 && prev.ModRevision != o.expected:
		return fmt.Errorf("%w: %q is at revision %d, not %d", storage.ErrConflict, o.key, prev.ModRevision, o.expected)
	case o.kind == opUpdate:
		o.event = storage.Event{Type: storage.EventPut, PrevKV: prev,
			KV: storage.KeyValue{Key: o.key, Value: o.value, CreateRevision: prev.CreateRevision, ModRevision: rev}}
	default:
		o.event = storage.Event{Type: storage.EventDelete, PrevKV: prev,
			KV: storage.KeyValue{Key: o.key, ModRevision: rev}}
	}
	return nil
}

// checkpointResult is how a checkpoint ended: the bbolt file holds the
// changes up to last, in epochs, unless err.
type checkpointResult struct {
	last   int64
	epochs walEpochs
	err    error
}

// startCheckpoint starts moving the pending changes into the bbolt file
// beside the writes, unless one is running or none is pending. The writer
// turns to the other log file first, unless the last checkpoint failed
// after turning (the other file then holds needed records). A data file
// without a next epoch is checkpointed in place, with the writes waiting,
// as before there were two log files.
func (s *Store) startCheckpoint() {
	events := s.overlay.pending()
	if s.checkpointing || len(events) == 0 {
		return
	}
	last := events[len(events)-1].KV.ModRevision
	if s.epochs.next == 0 {
		epochs := walEpochs{cur: newEpoch(), next: newEpoch()}
		s.endCheckpoint(checkpointResult{last: last, epochs: epochs, err: s.writeEvents(events, last, epochs)})
		if s.checkpointErr == nil {
			s.wal.rewind(epochs.cur)
		}
		return
	}
	if s.wal.epoch() == s.epochs.cur {
		s.wal.turn(s.epochs.next)
	}
	epochs := walEpochs{cur: s.wal.epoch(), next: newEpoch()}
	s.checkpointing = true
	go func() {
		s.checkpointed <- checkpointResult{last: last, epochs: epochs, err: s.writeEvents(events, last, epochs)}
	}()
}

// endCheckpoint takes a checkpoint's end: the changes it moved leave the
// overlay, and its epochs are the file's.
func (s *Store) endCheckpoint(res checkpointResult) {
	s.checkpointing = false
	s.checkpointErr = res.err
	if res.err != nil {
		return
	}
	s.overlay.checkpointed(res.last)
	s.epochs = res.epochs
}

// checkpointAll waits for the running checkpoint, then moves what is still
// pending into the bbolt file and waits for that too.
func (s *Store) checkpointAll() error {
	for range 2 {
		if s.checkpointing {
			s.endCheckpoint(<-s.checkpointed)
		}
		s.startCheckpoint() // nothing when nothing is pending
	}
	return s.checkpointErr
}

// writeEvents records changes in the kv and log buckets and sets the file's
// revision to rev and the log's epochs, in one transaction.
func (s *Store) writeEvents(events []storage.Event, rev int64, epochs walEpochs) error {
	return s.db.Update(func(tx *bbolt.Tx) error {
		w := writeTx{kv: tx.Bucket(bucketKV), log: tx.Bucket(bucketLog)}
		w.log.FillPercent = 1 // the log is append-only
		for _, ev := range events {
			if err := w.put(ev); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if err := putEpochs(meta, epochs); err != nil {
			return err
		}
		return meta.Put(metaRev, encodeRev(rev))
	})
}

// flush asks the writer for a checkpoint and waits for it.
func (s *Store) flush() error {
	reply := make(chan error, 1)
	select {
	case s.flushes <- reply:
		return <-reply
	case <-s.closing:
		return storage.ErrClosed
	}
}

// writeTx applies changes inside one bbolt transaction.
type writeTx struct {
	kv, log *bbolt.Bucket
}

// put records a change in the kv and log buckets.
func (w writeTx) put(ev storage.Event) error {
	var err error
	if ev.Type == storage.EventDelete {
		err = w.kv.Delete([]byte(ev.KV.Key))
	} else {
		err = w.kv.Put([]byte(ev.KV.Key), encodeRecord(ev.KV))
	}
	if err != nil {
		return err
	}
	return w.log.Put(encodeRev(ev.KV.ModRevision), encodeEvent(ev))
}
