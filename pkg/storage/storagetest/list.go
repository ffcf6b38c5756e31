package storagetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/admitd/admitd/pkg/storage"
)

func testList(t *testing.T, s storage.Store) {
	for _, k := range []string{"/a/2", "/ab/x", "/a/10", "/a", "/b/1", "/a/1", "/a/1/x", "/a/\xff", "/a/Z", "/a/a"} {
		mustCreate(t, s, k, "v"+k)
	}
	rev := mustRevision(t, s)
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"/a", "/a/1", "/a/1/x", "/a/10", "/a/2", "/a/Z", "/a/a", "/a/\xff", "/ab/x", "/b/1"}},
		{"/a/", []string{"/a/1", "/a/1/x", "/a/10", "/a/2", "/a/Z", "/a/a", "/a/\xff"}},
		{"/a", []string{"/a", "/a/1", "/a/1/x", "/a/10", "/a/2", "/a/Z", "/a/a", "/a/\xff", "/ab/x"}},
		{"/a/1", []string{"/a/1", "/a/1/x", "/a/10"}},
		{"/a/1/", []string{"/a/1/x"}},
		{"/ab/", []string{"/ab/x"}},
		{"/b/1", []string{"/b/1"}},
		{"/c/", nil},
		{"/a/\xff/", nil},
	} {
		res := mustList(t, s, tc.prefix, storage.ListOptions{})
		if got := keysOf(res.Items); !slices.Equal(got, tc.want) {
			t.Errorf("List(%q) keys = %q, want %q", tc.prefix, got, tc.want)
		}
		if res.Revision != rev || res.More || res.RemainingCount != 0 {
			t.Errorf("List(%q) = revision %d, more %v, remaining %d; want %d, false, 0",
				tc.prefix, res.Revision, res.More, res.RemainingCount, rev)
		}
		for _, kv := range res.Items {
			if string(kv.Value) != "v"+kv.Key || kv.CreateRevision != kv.ModRevision {
				t.Errorf("List(%q) item %s, want value %q and CreateRevision = ModRevision", tc.prefix, fmtKV(kv), "v"+kv.Key)
			}
		}
	}
}

func testListPaging(t *testing.T, s storage.Store) {
	for i := range 10 {
		mustCreate(t, s, fmt.Sprintf("/p/%d", i), "")
	}
	mustCreate(t, s, "/q/x", "")
	mustCreate(t, s, "/o/x", "")
	for _, tc := range []struct {
		limit     int64
		start     string
		want      []string
		more      bool
		remaining int64
	}{
		{0, "", []string{"/p/0", "/p/1", "/p/2", "/p/3", "/p/4", "/p/5", "/p/6", "/p/7", "/p/8", "/p/9"}, false, 0},
		{10, "", []string{"/p/0", "/p/1", "/p/2", "/p/3", "/p/4", "/p/5", "/p/6", "/p/7", "/p/8", "/p/9"}, false, 0},
		{3, "", []string{"/p/0", "/p/1", "/p/2"}, true, 7},
		{3, "/p/", []string{"/p/0", "/p/1", "/p/2"}, true, 7},
		{3, "/p/3", []string{"/p/3", "/p/4", "/p/5"}, true, 4},
		{3, "/p/7", []string{"/p/7", "/p/8", "/p/9"}, false, 0},
		{4, "/p/7", []string{"/p/7", "/p/8", "/p/9"}, false, 0},
		{1, "/p/9", []string{"/p/9"}, false, 0},
		{2, "/p/35", []string{"/p/4", "/p/5"}, true, 4},
		{0, "/p/8", []string{"/p/8", "/p/9"}, false, 0},
		{5, "/p/\xff", nil, false, 0},
	} {
		opts := storage.ListOptions{Limit: tc.limit, StartKey: tc.start}
		res := mustList(t, s, "/p/", opts)
		if got := keysOf(res.Items); !slices.Equal(got, tc.want) || res.More != tc.more || res.RemainingCount != tc.remaining {
			t.Errorf("List(\"/p/\", %+v) = %q, more %v, remaining %d; want %q, %v, %d",
				opts, got, res.More, res.RemainingCount, tc.want, tc.more, tc.remaining)
		}
	}
	for _, start := range []string{"/q/x", "/o/x", "/"} {
		if _, err := s.List(t.Context(), "/p/", storage.ListOptions{StartKey: start}); err == nil {
			t.Errorf("List(\"/p/\", StartKey %q) error = nil, want an error (start key outside the prefix)", start)
		}
	}
}

// testListPagingAtRevision pages through a list while the data changes: the
// pages, read at the first page's revision, must form one consistent list.
func testListPagingAtRevision(t *testing.T, s storage.Store) {
	m := newModel(t, s)
	for i := range 9 {
		m.create(fmt.Sprintf("/p/%d", i), "old")
	}
	first := mustList(t, s, "/p/", storage.ListOptions{Limit: 4})
	m.delete("/p/5")
	m.update("/p/6", "new")
	m.create("/p/55", "new")
	m.create("/p/00", "new")
	var got []storage.KeyValue
	got = append(got, first.Items...)
	start := first.Items[len(first.Items)-1].Key + "\x00"
	for {
		res := mustList(t, s, "/p/", storage.ListOptions{Revision: first.Revision, Limit: 4, StartKey: start})
		if res.Revision != first.Revision {
			t.Fatalf("List at revision %d returned revision %d", first.Revision, res.Revision)
		}
		got = append(got, res.Items...)
		if !res.More {
			break
		}
		start = res.Items[len(res.Items)-1].Key + "\x00"
	}
	if want := m.list(first.Revision, "/p/"); !equalKVs(got, want) {
		t.Errorf("pages at revision %d = %s, want %s", first.Revision, fmtKVs(got), fmtKVs(want))
	}
}

// historyWrites is a history with creates, updates, deletes and re-creates,
// under two prefixes.
func historyWrites(m *model) {
	m.create("/p/a", "a1")
	m.create("/p/b", "b1")
	m.create("/other/x", "x1")
	m.update("/p/a", "a2")
	m.delete("/p/b")
	m.create("/p/c", "c1")
	m.create("/p/b", "b2")
	m.update("/p/c", "c2")
	m.delete("/p/a")
	m.update("/other/x", "x2")
	m.create("/p/d", "d1")
}

func testListAtRevision(t *testing.T, s storage.Store) {
	m := newModel(t, s)
	historyWrites(m)
	for rev := int64(1); rev <= m.rev(); rev++ {
		for _, prefix := range []string{"", "/p/", "/other/", "/none/"} {
			m.checkList(rev, prefix, 1)
		}
	}
}

func testListRevisionErrors(t *testing.T, s storage.Store) {
	m := newModel(t, s)
	historyWrites(m) // 11 revisions
	if err := s.Compact(t.Context(), 4); err != nil {
		t.Fatalf("Compact(4) error = %v", err)
	}
	for _, tc := range []struct {
		rev     int64
		wantErr error
	}{
		{0, nil},
		{1, storage.ErrCompacted},
		{3, storage.ErrCompacted},
		{4, nil}, // the state at the compacted revision is kept
		{5, nil},
		{11, nil},
		{12, storage.ErrFutureRevision},
		{1000, storage.ErrFutureRevision},
	} {
		_, err := s.List(t.Context(), "/p/", storage.ListOptions{Revision: tc.rev})
		if !isErr(err, tc.wantErr) {
			t.Errorf("List(Revision %d) after Compact(4) error = %v, want %v", tc.rev, err, tc.wantErr)
		}
		if err == nil && tc.rev != 0 {
			m.checkList(tc.rev, "/p/", 2)
		}
	}
}

func testCompact(t *testing.T, s storage.Store) {
	ctx := t.Context()
	m := newModel(t, s)
	historyWrites(m)
	compacted := func(want int64) {
		t.Helper()
		if got, err := s.CompactedRevision(ctx); err != nil || got != want {
			t.Errorf("CompactedRevision() = %d, %v; want %d", got, err, want)
		}
	}
	compacted(0)
	if err := s.Compact(ctx, 12); !isErr(err, storage.ErrFutureRevision) {
		t.Errorf("Compact(12) at revision 11 error = %v, want %v", err, storage.ErrFutureRevision)
	}
	compacted(0)
	if err := s.Compact(ctx, 5); err != nil {
		t.Fatalf("Compact(5) error = %v", err)
	}
	compacted(5)
	// Compacting again at or below the compacted revision may succeed or
	// report ErrCompacted, but must not move the compacted revision back.
	for _, rev := range []int64{5, 2} {
		if err := s.Compact(ctx, rev); !isErr(err, nil) && !isErr(err, storage.ErrCompacted) {
			t.Errorf("Compact(%d) after Compact(5) error = %v, want nil or %v", rev, err, storage.ErrCompacted)
		}
		compacted(5)
	}
	if err := s.Compact(ctx, 11); err != nil {
		t.Fatalf("Compact(11) error = %v", err)
	}
	compacted(11)
	if rev := mustRevision(t, s); rev != 11 {
		t.Errorf("Revision() after Compact = %d, want 11", rev)
	}
	m.checkList(11, "", 2)
	if _, err := s.List(ctx, "", storage.ListOptions{Revision: 10}); !isErr(err, storage.ErrCompacted) {
		t.Errorf("List(Revision 10) after Compact(11) error = %v, want %v", err, storage.ErrCompacted)
	}
	m.update("/p/d", "d2")
	m.create("/p/e", "e1")
	m.checkList(12, "/p/", 1)
	m.checkList(13, "/p/", 1)
}

// testRandomOps runs a seeded random mix of successful and failing writes
// against the model, then checks every retained revision and the history.
func testRandomOps(t *testing.T, s storage.Store) {
	rng := rand.New(rand.NewPCG(1, 2))
	var keys []string
	for _, p := range []string{"/r/a/", "/r/ab/", "/r/b/"} {
		for i := range 5 {
			keys = append(keys, fmt.Sprintf("%s%d", p, i))
		}
	}
	m := newModel(t, s)
	for range 400 {
		m.randomOp(keys, rng.IntN)
	}
	compactAt := m.rev() / 2
	if err := s.Compact(t.Context(), compactAt); err != nil {
		t.Fatalf("Compact(%d) error = %v", compactAt, err)
	}
	for rev := compactAt; rev <= m.rev(); rev += 1 + rng.Int64N(5) {
		for _, prefix := range []string{"", "/r/a", "/r/a/", "/r/b/"} {
			m.checkList(rev, prefix, 1+rng.Int64N(4))
		}
	}
	m.checkList(m.rev(), "/r/", 3)
	w, err := s.Watch(t.Context(), "/r/a", compactAt)
	if err != nil {
		t.Fatalf("Watch(after %d) error = %v", compactAt, err)
	}
	defer w.Stop()
	want := m.eventsAfter(compactAt, "/r/a")
	if got := receive(t, w, len(want)); !equalEvents(got, want) {
		t.Errorf("Watch(\"/r/a\", after %d) = %s, want %s", compactAt, fmtEvents(got), fmtEvents(want))
	}
}
