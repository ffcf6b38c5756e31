package storage

import (
	"context"
	"errors"
)

// ErrTooLarge is a write over the store's size bound. Its text is etcd's,
// which kube-apiserver passes on to the client (a 500).
var ErrTooLarge = errors.New("etcdserver: request is too large")

// DefaultMaxRequestBytes is etcd's default --max-request-bytes (1.5 MiB):
// the largest write a kube-apiserver on a default etcd can make.
const DefaultMaxRequestBytes = 3 << 19

// WithSizeLimit returns s refusing creates and updates whose key and value
// together pass max bytes with ErrTooLarge, as etcd refuses requests over
// its --max-request-bytes: the object size ceiling kube-apiserver relies
// on, for stores that have none of their own.
func WithSizeLimit(s Store, max int) Store {
	return sizeLimited{Store: s, max: max}
}

type sizeLimited struct {
	Store
	max int
}

func (s sizeLimited) Create(ctx context.Context, key string, value []byte) (KeyValue, error) {
	if len(key)+len(value) > s.max {
		return KeyValue{}, ErrTooLarge
	}
	return s.Store.Create(ctx, key, value)
}

func (s sizeLimited) Update(ctx context.Context, key string, value []byte, expectedRevision int64) (KeyValue, error) {
	if len(key)+len(value) > s.max {
		return KeyValue{}, ErrTooLarge
	}
	return s.Store.Update(ctx, key, value, expectedRevision)
}
