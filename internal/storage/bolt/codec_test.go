package bolt

import (
	"bytes"
	"testing"

	"github.com/admitd/admitd/pkg/storage"
)

func TestEventRoundTrip(t *testing.T) {
	prev := &storage.KeyValue{Key: "/k", Value: []byte("old"), CreateRevision: 3, ModRevision: 7}
	for _, ev := range []storage.Event{
		{Type: storage.EventPut, KV: storage.KeyValue{Key: "/k", Value: []byte("v"), CreateRevision: 9, ModRevision: 9}},
		{Type: storage.EventPut, KV: storage.KeyValue{Key: "/k", Value: nil, CreateRevision: 3, ModRevision: 9}, PrevKV: prev},
		{Type: storage.EventDelete, KV: storage.KeyValue{Key: "/k", ModRevision: 9}, PrevKV: prev},
		{Type: storage.EventPut, KV: storage.KeyValue{Key: "\x00\xff", Value: bytes.Repeat([]byte{0}, 300), CreateRevision: 1 << 40, ModRevision: 9}},
		{Type: storage.EventPut, KV: storage.KeyValue{Key: string(bytes.Repeat([]byte{'k'}, 200)), Value: []byte("v"), CreateRevision: 1 << 62, ModRevision: 9}},
	} {
		got, err := decodeEvent(9, encodeEvent(ev))
		if err != nil || got.Type != ev.Type || !sameKV(got.KV, ev.KV) ||
			(got.PrevKV == nil) != (ev.PrevKV == nil) || (got.PrevKV != nil && !sameKV(*got.PrevKV, *prev)) {
			t.Errorf("decodeEvent(encodeEvent(%+v)) = %+v, %v", ev, got, err)
		}
		if b := encodeEvent(ev); len(b) != eventSize(ev) {
			t.Errorf("len(encodeEvent(%+v)) = %d, eventSize = %d", ev, len(b), eventSize(ev))
		}
		if key, err := eventKey(encodeEvent(ev)); err != nil || string(key) != ev.KV.Key {
			t.Errorf("eventKey(encodeEvent(%+v)) = %q, %v", ev, key, err)
		}
	}
}

func sameKV(a, b storage.KeyValue) bool {
	return a.Key == b.Key && bytes.Equal(a.Value, b.Value) &&
		a.CreateRevision == b.CreateRevision && a.ModRevision == b.ModRevision
}

// FuzzDecodeEvent checks that no log entry, however damaged, makes the
// decoder panic, and that what decodes re-encodes to the same bytes.
func FuzzDecodeEvent(f *testing.F) {
	f.Add(encodeEvent(storage.Event{KV: storage.KeyValue{Key: "/a", Value: []byte("v"), CreateRevision: 1}}))
	f.Add(encodeEvent(storage.Event{Type: storage.EventDelete, KV: storage.KeyValue{Key: "/a"},
		PrevKV: &storage.KeyValue{Key: "/a", Value: []byte("v"), CreateRevision: 1, ModRevision: 2}}))
	f.Add([]byte{flagHasPrev, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := decodeEvent(5, b)
		_, keyErr := eventKey(b)
		if err != nil {
			return
		}
		if keyErr != nil {
			t.Fatalf("decodeEvent accepted %x but eventKey failed: %v", b, keyErr)
		}
		again, err := decodeEvent(5, encodeEvent(ev))
		if err != nil || again.KV.Key != ev.KV.Key || !bytes.Equal(again.KV.Value, ev.KV.Value) {
			t.Fatalf("re-encoding %+v gave %+v, %v", ev, again, err)
		}
	})
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(storage.KeyValue{Key: "/a", Value: []byte("v"), CreateRevision: 1, ModRevision: 2}))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		kv, err := decodeRecord("/a", b)
		if err != nil {
			return
		}
		if got := encodeRecord(kv); !bytes.Equal(got, b) {
			t.Fatalf("encodeRecord(decodeRecord(%x)) = %x", b, got)
		}
	})
}
