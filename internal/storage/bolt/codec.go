package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/admitd/admitd/pkg/storage"
)

// On-disk layout, all in one bbolt file:
//
//	kv   key  -> record: createRev (8 bytes BE) | modRev (8 bytes BE) | value
//	log  revision (8 bytes BE) -> event (see encodeEvent), until compacted
//	meta "rev" -> current revision, "compacted" -> compacted revision (8 bytes BE),
//	     "walEpoch" -> the epoch of the write-ahead log's records after "rev",
//	     "walNextEpoch" -> the epoch of the records after those, in the other
//	     log file, once a checkpoint has begun (8 bytes BE each)
var (
	bucketKV   = []byte("kv")
	bucketLog  = []byte("log")
	bucketMeta = []byte("meta")

	metaRev       = []byte("rev")
	metaCompacted = []byte("compacted")
	metaWALEpoch  = []byte("walEpoch")
	metaWALNext   = []byte("walNextEpoch")
)

const recordHeader = 16

var errCorrupt = errors.New("bolt: corrupt data file")

func encodeRev(rev int64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(rev))
}

func decodeRev(b []byte) int64 {
	if len(b) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

func encodeRecord(kv storage.KeyValue) []byte {
	b := make([]byte, 0, recordHeader+len(kv.Value))
	b = binary.BigEndian.AppendUint64(b, uint64(kv.CreateRevision))
	b = binary.BigEndian.AppendUint64(b, uint64(kv.ModRevision))
	return append(b, kv.Value...)
}

// decodeRecord decodes a kv bucket value, copying it out of bbolt's memory.
func decodeRecord(key string, b []byte) (storage.KeyValue, error) {
	if len(b) < recordHeader {
		return storage.KeyValue{}, fmt.Errorf("%w: short record for key %q", errCorrupt, key)
	}
	return storage.KeyValue{
		Key:            key,
		CreateRevision: int64(binary.BigEndian.Uint64(b)),
		ModRevision:    int64(binary.BigEndian.Uint64(b[8:])),
		Value:          bytes.Clone(b[recordHeader:]),
	}, nil
}

// decodeRecordHaving is decodeRecord without copying the value when have
// says the caller already has it at the record's revision.
func decodeRecordHaving(key string, b []byte, have func(string, int64) bool) (storage.KeyValue, error) {
	if have == nil || len(b) < recordHeader {
		return decodeRecord(key, b)
	}
	modRev := int64(binary.BigEndian.Uint64(b[8:]))
	if !have(key, modRev) {
		return decodeRecord(key, b)
	}
	return storage.KeyValue{Key: key, CreateRevision: int64(binary.BigEndian.Uint64(b)), ModRevision: modRev}, nil
}

// Log entry flags.
const (
	flagDelete  = 1 << 0
	flagHasPrev = 1 << 1
)

// encodeEvent encodes a log entry; its revision is the log key. Layout:
//
//	flags byte | len(key) uvarint | key | createRev uvarint |
//	len(value) uvarint | value |
//	[prev: createRev uvarint | modRev uvarint | len(value) uvarint | value]
func encodeEvent(ev storage.Event) []byte {
	return appendEvent(make([]byte, 0, eventSize(ev)), ev)
}

// appendEvent appends the encoding of ev (see encodeEvent) to b.
func appendEvent(b []byte, ev storage.Event) []byte {
	var flags byte
	if ev.Type == storage.EventDelete {
		flags |= flagDelete
	}
	if ev.PrevKV != nil {
		flags |= flagHasPrev
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(ev.KV.Key)))
	b = append(b, ev.KV.Key...)
	b = binary.AppendUvarint(b, uint64(ev.KV.CreateRevision))
	b = appendBytes(b, ev.KV.Value)
	if ev.PrevKV != nil {
		b = binary.AppendUvarint(b, uint64(ev.PrevKV.CreateRevision))
		b = binary.AppendUvarint(b, uint64(ev.PrevKV.ModRevision))
		b = appendBytes(b, ev.PrevKV.Value)
	}
	return b
}

// eventSize is the length of ev's encoding, exactly.
func eventSize(ev storage.Event) int {
	n := 1 + uvarintSize(uint64(len(ev.KV.Key))) + len(ev.KV.Key) + uvarintSize(uint64(ev.KV.CreateRevision)) +
		uvarintSize(uint64(len(ev.KV.Value))) + len(ev.KV.Value)
	if p := ev.PrevKV; p != nil {
		n += uvarintSize(uint64(p.CreateRevision)) + uvarintSize(uint64(p.ModRevision)) +
			uvarintSize(uint64(len(p.Value))) + len(p.Value)
	}
	return n
}

// uvarintSize is the length of x as binary.AppendUvarint writes it.
func uvarintSize(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

func appendBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

// eventKey returns the key of an encoded log entry without decoding the rest.
func eventKey(b []byte) ([]byte, error) {
	d := decoder{b: b}
	d.byte()
	k := d.bytes()
	return k, d.err
}

// decodeEvent decodes the log entry of revision rev, copying it out of
// bbolt's memory.
func decodeEvent(rev int64, b []byte) (storage.Event, error) {
	d := decoder{b: b}
	flags := d.byte()
	ev := storage.Event{Type: storage.EventPut}
	if flags&flagDelete != 0 {
		ev.Type = storage.EventDelete
	}
	ev.KV.Key = string(d.bytes())
	ev.KV.CreateRevision = int64(d.uvarint())
	ev.KV.ModRevision = rev
	if v := d.bytes(); ev.Type == storage.EventPut {
		ev.KV.Value = bytes.Clone(v)
	}
	if flags&flagHasPrev != 0 {
		ev.PrevKV = &storage.KeyValue{
			Key:            ev.KV.Key,
			CreateRevision: int64(d.uvarint()),
			ModRevision:    int64(d.uvarint()),
			Value:          bytes.Clone(d.bytes()),
		}
	}
	if d.err != nil {
		return storage.Event{}, fmt.Errorf("log entry %d: %w", rev, d.err)
	}
	return ev, nil
}

// decoder reads a log entry; the first error sticks and zeroes later reads.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated log entry", errCorrupt)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if uint64(len(d.b)) < n {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}
