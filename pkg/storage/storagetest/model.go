package storagetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/admitd/admitd/pkg/storage"
)

// model is the reference behaviour of a store that only the test writes to:
// it performs writes on the store, checks their results, and remembers the
// state at every revision and the event of every write.
type model struct {
	t      *testing.T
	s      storage.Store
	kvs    map[string]storage.KeyValue
	snaps  []map[string]storage.KeyValue // snaps[r] is the state at revision r
	events []storage.Event               // events[r-1] is the write of revision r
}

func newModel(t *testing.T, s storage.Store) *model {
	if rev := mustRevision(t, s); rev != 0 {
		t.Fatalf("new store at revision %d, want 0", rev)
	}
	return &model{t: t, s: s, kvs: map[string]storage.KeyValue{}, snaps: []map[string]storage.KeyValue{{}}}
}

func (m *model) rev() int64 { return int64(len(m.events)) }

// record notes a successful write.
func (m *model) record(ev storage.Event) {
	if ev.Type == storage.EventDelete {
		delete(m.kvs, ev.KV.Key)
	} else {
		m.kvs[ev.KV.Key] = ev.KV
	}
	m.events = append(m.events, ev)
	m.snaps = append(m.snaps, maps.Clone(m.kvs))
}

func (m *model) create(key, value string) storage.KeyValue {
	m.t.Helper()
	got, err := m.s.Create(m.t.Context(), key, []byte(value))
	want := kv(key, value, m.rev()+1, m.rev()+1)
	if err != nil || !equalKV(got, want) {
		m.t.Fatalf("Create(%q) = %s, %v; want %s", key, fmtKV(got), err, fmtKV(want))
	}
	m.record(storage.Event{Type: storage.EventPut, KV: want})
	return want
}

func (m *model) update(key, value string) storage.KeyValue {
	m.t.Helper()
	prev := m.kvs[key]
	got, err := m.s.Update(m.t.Context(), key, []byte(value), prev.ModRevision)
	want := kv(key, value, prev.CreateRevision, m.rev()+1)
	if err != nil || !equalKV(got, want) {
		m.t.Fatalf("Update(%q) = %s, %v; want %s", key, fmtKV(got), err, fmtKV(want))
	}
	m.record(storage.Event{Type: storage.EventPut, KV: want, PrevKV: &prev})
	return want
}

func (m *model) delete(key string) {
	m.t.Helper()
	prev := m.kvs[key]
	got, rev, err := m.s.Delete(m.t.Context(), key, prev.ModRevision)
	if err != nil || !equalKV(got, prev) || rev != m.rev()+1 {
		m.t.Fatalf("Delete(%q) = %s, %d, %v; want %s, %d", key, fmtKV(got), rev, err, fmtKV(prev), m.rev()+1)
	}
	m.record(storage.Event{Type: storage.EventDelete, KV: storage.KeyValue{Key: key, ModRevision: rev}, PrevKV: &prev})
}

// list returns the keys under prefix at rev, in key order.
func (m *model) list(rev int64, prefix string) []storage.KeyValue {
	var items []storage.KeyValue
	for k, kv := range m.snaps[rev] {
		if strings.HasPrefix(k, prefix) {
			items = append(items, kv)
		}
	}
	slices.SortFunc(items, func(a, b storage.KeyValue) int { return strings.Compare(a.Key, b.Key) })
	return items
}

// eventsAfter returns the events under prefix with a revision above after.
func (m *model) eventsAfter(after int64, prefix string) []storage.Event {
	var evs []storage.Event
	for _, ev := range m.events[after:] {
		if strings.HasPrefix(ev.KV.Key, prefix) {
			evs = append(evs, ev)
		}
	}
	return evs
}

// checkList compares List at rev (paged and unpaged) with the model.
func (m *model) checkList(rev int64, prefix string, limit int64) {
	m.t.Helper()
	want := m.list(rev, prefix)
	got := mustList(m.t, m.s, prefix, storage.ListOptions{Revision: rev})
	if got.Revision != rev || !equalKVs(got.Items, want) {
		m.t.Errorf("List(%q, Revision %d) = revision %d, %s; want %s", prefix, rev, got.Revision, fmtKVs(got.Items), fmtKVs(want))
	}
	if paged := listAllPages(m.t, m.s, prefix, rev, limit); !equalKVs(paged, want) {
		m.t.Errorf("List(%q, Revision %d) in pages of %d = %s, want %s", prefix, rev, limit, fmtKVs(paged), fmtKVs(want))
	}
}

// equalEvent compares a received event with the expected one. A delete's
// KV is compared on Key and ModRevision only, and must have no value.
func equalEvent(got, want storage.Event) bool {
	if got.Type != want.Type {
		return false
	}
	if got.Type == storage.EventDelete {
		if got.KV.Key != want.KV.Key || got.KV.ModRevision != want.KV.ModRevision || len(got.KV.Value) != 0 {
			return false
		}
	} else if !equalKV(got.KV, want.KV) {
		return false
	}
	if got.PrevKV == nil || want.PrevKV == nil {
		return got.PrevKV == nil && want.PrevKV == nil
	}
	return equalKV(*got.PrevKV, *want.PrevKV)
}

func fmtEvent(ev storage.Event) string {
	if ev.PrevKV == nil {
		return fmt.Sprintf("%s %s", ev.Type, fmtKV(ev.KV))
	}
	return fmt.Sprintf("%s %s prev %s", ev.Type, fmtKV(ev.KV), fmtKV(*ev.PrevKV))
}

func fmtEvents(evs []storage.Event) string {
	parts := make([]string, len(evs))
	for i, ev := range evs {
		parts[i] = fmtEvent(ev)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// randomOp performs one random write or read on keys and checks it against
// the model; wrong expected revisions and missing or existing keys are
// chosen on purpose, so failures are exercised as much as successes.
func (m *model) randomOp(keys []string, pick func(n int) int) {
	m.t.Helper()
	ctx := m.t.Context()
	key := keys[pick(len(keys))]
	cur, exists := m.kvs[key]
	expected := []int64{0, cur.ModRevision, cur.ModRevision + 1, max(cur.ModRevision-1, 1)}[pick(4)]
	conflict := exists && expected != 0 && expected != cur.ModRevision
	value := fmt.Sprintf("v%d", m.rev()+1)
	var err, wantErr error
	switch pick(4) {
	case 0:
		var got storage.KeyValue
		got, err = m.s.Get(ctx, key)
		if err == nil && !equalKV(got, cur) {
			m.t.Errorf("Get(%q) = %s, want %s", key, fmtKV(got), fmtKV(cur))
		}
		wantErr = notFoundIf(!exists)
	case 1:
		wantErr = storage.ErrKeyExists
		if !exists {
			m.create(key, value)
			return
		}
		_, err = m.s.Create(ctx, key, []byte(value))
	case 2:
		if exists && !conflict {
			m.update(key, value)
			return
		}
		_, err = m.s.Update(ctx, key, []byte(value), expected)
		wantErr = conflictOr(exists)
	default:
		if exists && !conflict {
			m.delete(key)
			return
		}
		_, _, err = m.s.Delete(ctx, key, expected)
		wantErr = conflictOr(exists)
	}
	if !isErr(err, wantErr) {
		m.t.Fatalf("op on %q (exists %v, expected revision %d): error = %v, want %v", key, exists, expected, err, wantErr)
	}
}

func notFoundIf(missing bool) error {
	if missing {
		return storage.ErrNotFound
	}
	return nil
}

func conflictOr(exists bool) error {
	if exists {
		return storage.ErrConflict
	}
	return storage.ErrNotFound
}
