package kubelayout

import (
	"bytes"
	"sync"
)

// decodedSize is how many values decodedValues remembers, and
// maxDecodedValue the largest it remembers (together at most 32 MiB; the
// objects of a busy cluster are mostly far smaller).
const (
	decodedSize     = 2048
	maxDecodedValue = 16 << 10
)

// revKey names one value of etcd: a key at the revision it was written.
type revKey struct {
	key string
	rev int64
}

// decodedValues remembers admitd's form of the latest values written or
// read through the store, by upstream key and revision: the watchers of
// one write (controllers and caches each watch a wide prefix) then decode
// its protobuf once, and those of a write made through this store not at
// all. A key at a revision has one value, so an entry never goes stale; the
// oldest entries are forgotten first.
type decodedValues struct {
	mu      sync.Mutex
	m       map[revKey][]byte
	ring    [decodedSize]revKey
	next    int
	pending map[string]*pendingWrite // by upstream key
}

// pendingWrite is a write through the store whose revision is not known
// yet: its watchers may see it before the write returns.
type pendingWrite struct {
	stored, value []byte
}

func newDecodedValues() *decodedValues {
	return &decodedValues{m: make(map[revKey][]byte, decodedSize), pending: map[string]*pendingWrite{}}
}

// expect announces a write of stored (admitd's value) to key; the
// returned entry goes to settle when the write has returned.
func (d *decodedValues) expect(key string, stored, value []byte) *pendingWrite {
	p := &pendingWrite{stored: stored, value: value}
	d.mu.Lock()
	d.pending[key] = p
	d.mu.Unlock()
	return p
}

// settle forgets p, unless a later write to its key has replaced it.
func (d *decodedValues) settle(key string, p *pendingWrite) {
	d.mu.Lock()
	if d.pending[key] == p {
		delete(d.pending, key)
	}
	d.mu.Unlock()
}

// getPending returns a copy of admitd's value of a write to key still in
// flight whose stored bytes are stored: a watcher that sees the write
// before it returns need not decode it.
func (d *decodedValues) getPending(key string, stored []byte) ([]byte, bool) {
	d.mu.Lock()
	p, ok := d.pending[key]
	d.mu.Unlock()
	if !ok || !bytes.Equal(p.stored, stored) {
		return nil, false
	}
	return bytes.Clone(p.value), true
}

// get returns a copy of the remembered value, if any.
func (d *decodedValues) get(key string, rev int64) ([]byte, bool) {
	d.mu.Lock()
	v, ok := d.m[revKey{key, rev}]
	d.mu.Unlock()
	if !ok {
		return nil, false
	}
	return bytes.Clone(v), true
}

// put remembers a copy of value, unless it is larger than maxDecodedValue.
func (d *decodedValues) put(key string, rev int64, value []byte) {
	if len(value) > maxDecodedValue {
		return
	}
	k := revKey{key, rev}
	value = bytes.Clone(value)
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.m[k]; ok {
		return
	}
	delete(d.m, d.ring[d.next])
	d.ring[d.next] = k
	d.next = (d.next + 1) % decodedSize
	d.m[k] = value
}
