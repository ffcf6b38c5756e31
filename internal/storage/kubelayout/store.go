package kubelayout

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// Store is a storage.Store in admitd's layout over one in upstream's.
type Store struct {
	storage.Store // Revision, Compact, CompactedRevision pass through
	m             *mapping
	decoded       *decodedValues

	sharedMu sync.Mutex
	shared   *sharedWatch // nil until the first Watch, or after Close
	closed   bool
}

// New wraps inner, whose keys and values are upstream's; builtin are the
// built-in resources (registry.NewCatalogue().Resources()).
func New(inner storage.Store, builtin []*registry.Resource) *Store {
	return &Store{Store: inner, m: newMapping(builtin), decoded: newDecodedValues()}
}

// Inner is the wrapped store.
func (s *Store) Inner() storage.Store { return s.Store }

// kv maps a stored key-value to admitd's; ok is false for keys that are
// no admitd object.
func (s *Store) kv(in storage.KeyValue) (storage.KeyValue, bool, error) {
	return s.kvUnder(in, layout.Root)
}

// kvUnder is kv for the keys under admitd's prefix: the others are left
// out before their value is decoded (a wide watch or list reads all of
// etcd, and decoding a protobuf value costs far more than mapping its key).
func (s *Store) kvUnder(in storage.KeyValue, prefix string) (storage.KeyValue, bool, error) {
	key, ok := s.m.keyFromKube(in.Key)
	if !ok || !strings.HasPrefix(key, prefix) || !s.m.decodable(key, in.Value) {
		return storage.KeyValue{}, false, nil
	}
	value, err := s.valueFromKube(key, in)
	if err != nil {
		return storage.KeyValue{}, false, err
	}
	in.Key, in.Value = key, value
	return in, true, nil
}

// valueFromKube is in's value in admitd's form (key), converted once per
// revision: see decodedValues.
func (s *Store) valueFromKube(key string, in storage.KeyValue) ([]byte, error) {
	if !isProto(in.Value) {
		return in.Value, nil
	}
	if v, ok := s.decoded.get(in.Key, in.ModRevision); ok {
		return v, nil
	}
	if v, ok := s.decoded.getPending(in.Key, in.Value); ok {
		s.decoded.put(in.Key, in.ModRevision, v)
		return v, nil
	}
	v, err := s.m.valueFromKube(key, in.Value)
	if err == nil {
		s.decoded.put(in.Key, in.ModRevision, v)
	}
	return v, err
}

// Get implements storage.Store.
func (s *Store) Get(ctx context.Context, key string) (storage.KeyValue, error) {
	got, err := s.Store.Get(ctx, s.m.keyToKube(key))
	if err != nil {
		return got, err
	}
	kv, _, err := s.kv(got)
	kv.Key = key
	return kv, err
}

// Create implements storage.Store.
func (s *Store) Create(ctx context.Context, key string, value []byte) (storage.KeyValue, error) {
	stored, err := s.m.valueToKube(key, value)
	if err != nil {
		return storage.KeyValue{}, err
	}
	kube := s.m.keyToKube(key)
	p := s.expecting(kube, stored, value)
	kv, err := s.Store.Create(ctx, kube, stored)
	s.written(kv, err, stored, value)
	s.settle(kube, p)
	kv.Key, kv.Value = key, value
	return kv, err
}

// Update implements storage.Store.
func (s *Store) Update(ctx context.Context, key string, value []byte, expectedRevision int64) (storage.KeyValue, error) {
	stored, err := s.m.valueToKube(key, value)
	if err != nil {
		return storage.KeyValue{}, err
	}
	kube := s.m.keyToKube(key)
	p := s.expecting(kube, stored, value)
	kv, err := s.Store.Update(ctx, kube, stored, expectedRevision)
	s.written(kv, err, stored, value)
	s.settle(kube, p)
	kv.Key, kv.Value = key, value
	return kv, err
}

// written remembers the admitd value of a successful write stored in
// protobuf, for the watchers that will see it.
func (s *Store) written(kv storage.KeyValue, err error, stored, value []byte) {
	if err == nil && isProto(stored) {
		s.decoded.put(kv.Key, kv.ModRevision, value)
	}
}

// expecting announces a write stored in protobuf to its watchers, which
// may see it before the write returns (see written); nil for others.
func (s *Store) expecting(kube string, stored, value []byte) *pendingWrite {
	if !isProto(stored) || len(value) > maxDecodedValue {
		return nil
	}
	return s.decoded.expect(kube, stored, value)
}

// settle ends what expecting began.
func (s *Store) settle(kube string, p *pendingWrite) {
	if p != nil {
		s.decoded.settle(kube, p)
	}
}

// Delete implements storage.Store.
func (s *Store) Delete(ctx context.Context, key string, expectedRevision int64) (storage.KeyValue, int64, error) {
	prev, rev, err := s.Store.Delete(ctx, s.m.keyToKube(key), expectedRevision)
	if err != nil {
		return prev, rev, err
	}
	kv, _, err := s.kv(prev)
	kv.Key = key
	return kv, rev, err
}

// List implements storage.Store. A prefix wider than one resource is read
// whole and filtered, then paged here.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	kube, exact := s.m.prefixToKube(prefix)
	if exact {
		inner := opts
		if opts.StartKey != "" {
			inner.StartKey = s.m.keyToKube(opts.StartKey)
		}
		res, err := s.Store.List(ctx, kube, inner)
		if err != nil {
			return res, err
		}
		return res, s.mapItems(&res, prefix)
	}
	res, err := s.Store.List(ctx, kube, storage.ListOptions{Revision: opts.Revision})
	if err != nil {
		return res, err
	}
	if err := s.mapItems(&res, prefix); err != nil {
		return res, err
	}
	slices.SortFunc(res.Items, func(a, b storage.KeyValue) int { return strings.Compare(a.Key, b.Key) })
	return page(res, opts), nil
}

// mapItems maps res's items to admitd's, keeping those under prefix.
func (s *Store) mapItems(res *storage.ListResult, prefix string) error {
	items := res.Items[:0]
	for _, in := range res.Items {
		kv, ok, err := s.kvUnder(in, prefix)
		if err != nil {
			return err
		}
		if ok {
			items = append(items, kv)
		}
	}
	res.Items = items
	return nil
}

// page cuts one page out of a whole, sorted list.
func page(res storage.ListResult, opts storage.ListOptions) storage.ListResult {
	start, _ := slices.BinarySearchFunc(res.Items, opts.StartKey, func(kv storage.KeyValue, k string) int { return strings.Compare(kv.Key, k) })
	items := res.Items[start:]
	out := storage.ListResult{Revision: res.Revision, Items: items}
	if opts.Limit > 0 && int64(len(items)) > opts.Limit {
		out.Items, out.More, out.RemainingCount = items[:opts.Limit], true, int64(len(items))-opts.Limit
	}
	return out
}

// Watch implements storage.Store: through the shared watch (shared.go)
// when it reaches back to afterRevision, else with a watch of its own.
func (s *Store) Watch(ctx context.Context, prefix string, afterRevision int64) (storage.Watcher, error) {
	if w, ok, err := s.watchShared(ctx, prefix, afterRevision); ok || err != nil {
		return w, err
	}
	return s.watchOwn(ctx, prefix, afterRevision)
}

// Close ends the shared watch, then closes the wrapped store.
func (s *Store) Close() error {
	s.closeShared()
	return s.Store.Close()
}

// watchOwn is a watch of the wrapped store for prefix alone.
func (s *Store) watchOwn(ctx context.Context, prefix string, afterRevision int64) (storage.Watcher, error) {
	kube, _ := s.m.prefixToKube(prefix)
	inner, err := s.Store.Watch(ctx, kube, afterRevision)
	if err != nil {
		return nil, err
	}
	w := &watcher{inner: inner, events: make(chan storage.Event), done: make(chan struct{})}
	go w.run(s, prefix)
	return w, nil
}
