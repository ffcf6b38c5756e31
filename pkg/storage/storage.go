// Package storage defines the key-value contract that every admitd storage
// backend implements: a flat, ordered key space with one global revision
// counter, as in etcd v3. The revision of the write that last changed a key is
// that object's resourceVersion.
//
// The package knows nothing about Kubernetes objects: values are opaque bytes
// and keys are opaque strings. Encoding, resourceVersion stamping and
// optimistic-concurrency retries live in the API server above it.
package storage

import (
	"context"
	"errors"
)

// Sentinel errors. Backends return them (possibly wrapped with %w) so that
// callers can test with errors.Is.
var (
	// ErrNotFound: the key does not exist (Get, Update, Delete).
	ErrNotFound = errors.New("storage: key not found")
	// ErrKeyExists: Create of a key that already exists.
	ErrKeyExists = errors.New("storage: key already exists")
	// ErrConflict: the key's current ModRevision differs from the expected one.
	ErrConflict = errors.New("storage: revision conflict")
	// ErrCompacted: the requested revision is older than the compacted revision.
	ErrCompacted = errors.New("storage: required revision has been compacted")
	// ErrFutureRevision: the requested revision is newer than the current one.
	ErrFutureRevision = errors.New("storage: required revision is a future revision")
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("storage: store closed")
)

// KeyValue is one key at one revision.
type KeyValue struct {
	Key   string
	Value []byte
	// CreateRevision is the revision of the write that created the key.
	CreateRevision int64
	// ModRevision is the revision of the last write to the key.
	ModRevision int64
}

// EventType tells a Put from a Delete.
type EventType int

const (
	// EventPut is a create or an update; PrevKV is nil for a create.
	EventPut EventType = iota
	// EventDelete removes a key; KV.Value is nil and KV.ModRevision is the
	// revision of the delete, PrevKV holds the deleted value.
	EventDelete
)

func (t EventType) String() string {
	if t == EventDelete {
		return "DELETE"
	}
	return "PUT"
}

// Event is one change, as delivered by Watch.
type Event struct {
	Type   EventType
	KV     KeyValue
	PrevKV *KeyValue
}

// ListOptions select a page of keys under a prefix.
type ListOptions struct {
	// Revision to read at; 0 means the current revision. A revision older
	// than the compacted one fails with ErrCompacted, a future one with
	// ErrFutureRevision.
	Revision int64
	// Limit is the maximum number of items; 0 means no limit.
	Limit int64
	// StartKey, when set, is the first key of the page (inclusive); it must
	// lie under the prefix. Used for continuation.
	StartKey string
	// NoRemainingCount says the caller needs More but not RemainingCount:
	// a backend that counts the keys beyond the page by walking them may
	// stop at the first (RemainingCount is then at least 1 when More).
	NoRemainingCount bool
	// HaveValue, when set, is asked (during List, one call at a time)
	// about each key of the page with its ModRevision; when it answers
	// true the caller already has that value, and the backend may leave
	// the item's Value nil rather than copy it. A backend that cannot
	// skip values ignores it.
	HaveValue func(key string, modRevision int64) bool
}

// ListResult is one page of a list.
type ListResult struct {
	Items []KeyValue
	// Revision is the revision the list was read at.
	Revision int64
	// More is true when keys beyond the page exist under the prefix.
	More bool
	// RemainingCount is the number of keys after this page (0 when !More).
	RemainingCount int64
}

// Watcher delivers events until it is stopped or its context ends.
type Watcher interface {
	// Events is closed when the watch ends (Stop, context cancelled, store
	// closed, or the watcher fell too far behind). Err tells which.
	Events() <-chan Event
	// Err is non-nil after Events is closed for any reason other than Stop
	// or context cancellation (for example ErrCompacted).
	Err() error
	Stop()
}

// Store is a flat, ordered, revisioned key space. Every successful write
// increases the store's revision by exactly one and is durable when the
// method returns. All methods are safe for concurrent use.
type Store interface {
	// Get returns the current value of key, or ErrNotFound.
	Get(ctx context.Context, key string) (KeyValue, error)
	// List returns the keys with the given prefix, in key order, consistent
	// at one revision.
	List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error)
	// Create stores value under a new key and returns the new revision, or
	// ErrKeyExists.
	Create(ctx context.Context, key string, value []byte) (KeyValue, error)
	// Update replaces the value of an existing key if its ModRevision equals
	// expectedRevision (0 means any) and returns the stored KeyValue.
	// Errors: ErrNotFound, ErrConflict.
	Update(ctx context.Context, key string, value []byte, expectedRevision int64) (KeyValue, error)
	// Delete removes key if its ModRevision equals expectedRevision (0 means
	// any). It returns the deleted KeyValue and the revision of the delete.
	// Errors: ErrNotFound, ErrConflict.
	Delete(ctx context.Context, key string, expectedRevision int64) (prev KeyValue, rev int64, err error)
	// Watch streams every change under prefix with a revision greater than
	// afterRevision, in revision order, starting with retained history.
	// afterRevision 0 means "from now". A revision at or below the compacted
	// revision fails with ErrCompacted.
	Watch(ctx context.Context, prefix string, afterRevision int64) (Watcher, error)
	// Revision returns the current revision (that of the latest write).
	Revision(ctx context.Context) (int64, error)
	// Compact discards history at and below rev; later reads and watches
	// at those revisions fail with ErrCompacted.
	Compact(ctx context.Context, rev int64) error
	// CompactedRevision returns the highest compacted revision (0 if none).
	CompactedRevision(ctx context.Context) (int64, error)
	// Close releases the store. Watchers end.
	Close() error
}
