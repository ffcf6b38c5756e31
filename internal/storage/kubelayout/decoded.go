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
	mu   sync.Mutex
	m    map[revKey][]byte
	ring [decodedSize]revKey
	next int
}

func newDecodedValues() *decodedValues {
	return &decodedValues{m: make(map[revKey][]byte, decodedSize)}
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
