// Package memory is an in-memory storage.Store for tests, examples and for
// running admitd without a data directory. It keeps every key and the full
// change history (until Compact) in maps and slices guarded by one mutex.
//
// It is not durable and not meant for large data sets: List sorts the keys
// under the prefix on every call.
package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/pkg/storage/fanout"
)

// Store is an in-memory storage.Store. Create one with New.
type Store struct {
	mu        sync.RWMutex
	closed    bool
	rev       int64
	compacted int64
	kvs       map[string]storage.KeyValue
	// history holds the event of every revision after compacted, in order:
	// history[i] is the event of revision compacted+1+i.
	history []storage.Event
	hub     *fanout.Hub
}

var _ storage.Store = (*Store)(nil)

// New returns an empty store at revision 0.
func New() *Store {
	return &Store{kvs: make(map[string]storage.KeyValue), hub: fanout.New(0, 0)}
}

var errEmptyKey = errors.New("memory: empty key")

// Get implements storage.Store.
func (s *Store) Get(_ context.Context, key string) (storage.KeyValue, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return storage.KeyValue{}, storage.ErrClosed
	}
	kv, ok := s.kvs[key]
	if !ok {
		return storage.KeyValue{}, fmt.Errorf("%w: %q", storage.ErrNotFound, key)
	}
	return clone(kv), nil
}

// Create implements storage.Store.
func (s *Store) Create(_ context.Context, key string, value []byte) (storage.KeyValue, error) {
	if key == "" {
		return storage.KeyValue{}, errEmptyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return storage.KeyValue{}, storage.ErrClosed
	}
	if _, ok := s.kvs[key]; ok {
		return storage.KeyValue{}, fmt.Errorf("%w: %q", storage.ErrKeyExists, key)
	}
	rev := s.rev + 1
	kv := storage.KeyValue{Key: key, Value: bytes.Clone(value), CreateRevision: rev, ModRevision: rev}
	s.commit(storage.Event{Type: storage.EventPut, KV: kv})
	return clone(kv), nil
}

// Update implements storage.Store.
func (s *Store) Update(_ context.Context, key string, value []byte, expectedRevision int64) (storage.KeyValue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, err := s.currentLocked(key, expectedRevision)
	if err != nil {
		return storage.KeyValue{}, err
	}
	kv := storage.KeyValue{Key: key, Value: bytes.Clone(value), CreateRevision: prev.CreateRevision, ModRevision: s.rev + 1}
	s.commit(storage.Event{Type: storage.EventPut, KV: kv, PrevKV: &prev})
	return clone(kv), nil
}

// Delete implements storage.Store.
func (s *Store) Delete(_ context.Context, key string, expectedRevision int64) (storage.KeyValue, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, err := s.currentLocked(key, expectedRevision)
	if err != nil {
		return storage.KeyValue{}, 0, err
	}
	rev := s.rev + 1
	s.commit(storage.Event{Type: storage.EventDelete, KV: storage.KeyValue{Key: key, ModRevision: rev}, PrevKV: &prev})
	return clone(prev), rev, nil
}

// currentLocked returns the current value of key if its ModRevision matches
// expected (0 matches any).
func (s *Store) currentLocked(key string, expected int64) (storage.KeyValue, error) {
	if s.closed {
		return storage.KeyValue{}, storage.ErrClosed
	}
	kv, ok := s.kvs[key]
	if !ok {
		return storage.KeyValue{}, fmt.Errorf("%w: %q", storage.ErrNotFound, key)
	}
	if expected != 0 && kv.ModRevision != expected {
		return storage.KeyValue{}, fmt.Errorf("%w: %q is at revision %d, not %d", storage.ErrConflict, key, kv.ModRevision, expected)
	}
	return kv, nil
}

// commit applies ev as the next revision and publishes it.
func (s *Store) commit(ev storage.Event) {
	s.rev++
	if ev.Type == storage.EventDelete {
		delete(s.kvs, ev.KV.Key)
	} else {
		s.kvs[ev.KV.Key] = ev.KV
	}
	s.history = append(s.history, ev)
	s.hub.Publish([]storage.Event{ev})
}

// List implements storage.Store.
func (s *Store) List(_ context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if err := checkListOptions(prefix, opts); err != nil {
		return storage.ListResult{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return storage.ListResult{}, storage.ErrClosed
	}
	rev := opts.Revision
	if rev == 0 {
		rev = s.rev
	}
	switch {
	case rev > s.rev:
		return storage.ListResult{}, fmt.Errorf("%w: %d (current %d)", storage.ErrFutureRevision, rev, s.rev)
	case rev < s.compacted:
		return storage.ListResult{}, fmt.Errorf("%w: %d (compacted %d)", storage.ErrCompacted, rev, s.compacted)
	}
	items := s.snapshotLocked(prefix, rev)
	res := storage.ListResult{Revision: rev}
	start, _ := slices.BinarySearchFunc(items, opts.StartKey, func(kv storage.KeyValue, k string) int {
		return strings.Compare(kv.Key, k)
	})
	items = items[start:]
	if opts.Limit > 0 && int64(len(items)) > opts.Limit {
		res.More = true
		res.RemainingCount = int64(len(items)) - opts.Limit
		items = items[:opts.Limit]
	}
	for _, kv := range items {
		res.Items = append(res.Items, clone(kv))
	}
	return res, nil
}

// snapshotLocked returns the keys under prefix as they were at rev, sorted.
func (s *Store) snapshotLocked(prefix string, rev int64) []storage.KeyValue {
	// The first change after rev to a key tells what the key was at rev.
	seen := make(map[string]bool)
	var items []storage.KeyValue
	for _, ev := range s.history[rev-s.compacted:] {
		k := ev.KV.Key
		if !strings.HasPrefix(k, prefix) || seen[k] {
			continue
		}
		seen[k] = true
		if ev.PrevKV != nil {
			items = append(items, *ev.PrevKV)
		}
	}
	for k, kv := range s.kvs {
		if strings.HasPrefix(k, prefix) && !seen[k] {
			items = append(items, kv)
		}
	}
	slices.SortFunc(items, func(a, b storage.KeyValue) int { return strings.Compare(a.Key, b.Key) })
	return items
}

// Watch implements storage.Store.
func (s *Store) Watch(ctx context.Context, prefix string, afterRevision int64) (storage.Watcher, error) {
	if afterRevision < 0 {
		return nil, fmt.Errorf("memory: negative watch revision %d", afterRevision)
	}
	s.mu.RLock()
	closed, compacted := s.closed, s.compacted
	s.mu.RUnlock()
	if closed {
		return nil, storage.ErrClosed
	}
	if afterRevision != 0 && afterRevision < compacted {
		return nil, fmt.Errorf("%w: watch after %d (compacted %d)", storage.ErrCompacted, afterRevision, compacted)
	}
	// without s.mu: the Hub may replay the history, which takes it
	return s.hub.Watch(ctx, prefix, afterRevision, s.replay)
}

// replay implements fanout.Replay over the in-memory history.
func (s *Store) replay(prefix string, after, upTo int64, emit func(storage.Event) bool) error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return storage.ErrClosed
	}
	if after < s.compacted {
		s.mu.RUnlock()
		return fmt.Errorf("%w: watch after %d (compacted %d)", storage.ErrCompacted, after, s.compacted)
	}
	var events []storage.Event
	for _, ev := range s.history[after-s.compacted : upTo-s.compacted] {
		if strings.HasPrefix(ev.KV.Key, prefix) {
			events = append(events, ev)
		}
	}
	s.mu.RUnlock()
	for _, ev := range events {
		if !emit(ev) {
			return nil
		}
	}
	return nil
}

// Revision implements storage.Store.
func (s *Store) Revision(context.Context) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, storage.ErrClosed
	}
	return s.rev, nil
}

// Compact implements storage.Store. Compacting at or below the compacted
// revision does nothing.
func (s *Store) Compact(_ context.Context, rev int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return storage.ErrClosed
	case rev > s.rev:
		return fmt.Errorf("%w: compact at %d (current %d)", storage.ErrFutureRevision, rev, s.rev)
	case rev <= s.compacted:
		return nil
	}
	s.history = slices.Clone(s.history[rev-s.compacted:])
	s.compacted = rev
	return nil
}

// CompactedRevision implements storage.Store.
func (s *Store) CompactedRevision(context.Context) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, storage.ErrClosed
	}
	return s.compacted, nil
}

// Close implements storage.Store. Watchers end with storage.ErrClosed; a
// second Close does nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.hub.Close()
	}
	return nil
}

func checkListOptions(prefix string, opts storage.ListOptions) error {
	switch {
	case opts.Revision < 0:
		return fmt.Errorf("memory: negative list revision %d", opts.Revision)
	case opts.Limit < 0:
		return fmt.Errorf("memory: negative list limit %d", opts.Limit)
	case opts.StartKey != "" && !strings.HasPrefix(opts.StartKey, prefix):
		return fmt.Errorf("memory: start key %q is not under prefix %q", opts.StartKey, prefix)
	}
	return nil
}

// clone returns kv with a private copy of its value.
func clone(kv storage.KeyValue) storage.KeyValue {
	kv.Value = bytes.Clone(kv.Value)
	return kv
}
