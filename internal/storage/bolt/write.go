package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"

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
// always means the write did not happen.
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
// other write already waiting, and commits them all in one transaction.
func (s *Store) run() {
	defer close(s.stopped)
	batch := make([]*op, 0, s.maxBatch)
	for {
		select {
		case o := <-s.ops:
			batch = append(batch[:0], o)
			// Let the writers woken by the last commit queue up again, so
			// that they join this batch instead of waiting for the next.
			runtime.Gosched()
		gather:
			for len(batch) < s.maxBatch {
				select {
				case o := <-s.ops:
					batch = append(batch, o)
				default:
					break gather
				}
			}
			s.commit(batch)
			clear(batch)
		case <-s.closing:
			return
		}
	}
}

// errNothingWritten rolls back a batch in which every write was refused, so
// that it costs no fsync.
var errNothingWritten = errors.New("nothing written")

// commit applies a batch in one transaction, then publishes its events and
// wakes its writers. A write refused for a logical reason (ErrKeyExists,
// ErrNotFound, ErrConflict) does not affect the others; a storage failure
// fails the whole batch and advances nothing.
func (s *Store) commit(batch []*op) {
	rev := s.rev.Load()
	var events []storage.Event
	err := s.db.Update(func(tx *bbolt.Tx) error {
		events = events[:0]
		w := writeTx{kv: tx.Bucket(bucketKV), log: tx.Bucket(bucketLog)}
		w.log.FillPercent = 1 // the log is append-only
		next := rev
		for _, o := range batch {
			refused, err := w.apply(o, next+1)
			if err != nil {
				return err
			}
			o.err = refused
			if refused == nil {
				next++
				events = append(events, o.event)
			}
		}
		if next == rev {
			return errNothingWritten
		}
		return tx.Bucket(bucketMeta).Put(metaRev, encodeRev(next))
	})
	switch {
	case errors.Is(err, errNothingWritten):
	case err != nil:
		if errors.Is(err, berrors.ErrDatabaseNotOpen) {
			err = storage.ErrClosed
		}
		for _, o := range batch {
			o.err = fmt.Errorf("bolt: commit: %w", err)
		}
	default:
		s.rev.Store(rev + int64(len(events)))
		s.hub.Publish(events)
	}
	for _, o := range batch {
		close(o.done)
	}
}

// writeTx applies writes inside one bbolt transaction.
type writeTx struct {
	kv, log *bbolt.Bucket
}

// apply performs o as revision rev. refused is the logical reason o cannot
// be applied, in which case nothing was written; err is a storage failure.
func (w writeTx) apply(o *op, rev int64) (refused, err error) {
	var prev *storage.KeyValue
	if b := w.kv.Get([]byte(o.key)); b != nil {
		kv, err := decodeRecord(o.key, b)
		if err != nil {
			return nil, err
		}
		prev = &kv
	}
	switch {
	case o.kind == opCreate && prev != nil:
		return fmt.Errorf("%w: %q", storage.ErrKeyExists, o.key), nil
	case o.kind == opCreate:
		o.event = storage.Event{Type: storage.EventPut,
			KV: storage.KeyValue{Key: o.key, Value: o.value, CreateRevision: rev, ModRevision: rev}}
	case prev == nil:
		return fmt.Errorf("%w: %q", storage.ErrNotFound, o.key), nil
	case o.expected != 0 && prev.ModRevision != o.expected:
		return fmt.Errorf("%w: %q is at revision %d, not %d", storage.ErrConflict, o.key, prev.ModRevision, o.expected), nil
	case o.kind == opUpdate:
		o.event = storage.Event{Type: storage.EventPut, PrevKV: prev,
			KV: storage.KeyValue{Key: o.key, Value: o.value, CreateRevision: prev.CreateRevision, ModRevision: rev}}
	default:
		o.event = storage.Event{Type: storage.EventDelete, PrevKV: prev,
			KV: storage.KeyValue{Key: o.key, ModRevision: rev}}
	}
	return nil, w.put(o.event)
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
