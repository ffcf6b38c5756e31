// Package storagetest is the conformance suite that every storage.Store
// backend runs: call Run from a test in the backend's package.
//
// The suite pins down the parts of the contract that storage.go leaves to
// prose: revisions, compare-and-swap, consistent paging, history, watch
// ordering and concurrency. After every test it checks invariants that must
// hold whatever the test did (revisions only grew, one revision per
// successful write, lists agree with gets). It is not a benchmark and does
// not test durability across restarts, which backends test themselves.
package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/admitd/admitd/pkg/storage"
)

// Run runs the conformance suite. newStore must return a new, empty store
// (revision 0) and arrange for it to be closed when the test ends
// (t.Cleanup); one test closes the store itself first, so a second Close must
// be harmless. newStore is called from parallel subtests.
func Run(t *testing.T, newStore func(t *testing.T) storage.Store) {
	for _, tc := range tests() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &checked{Store: newStore(t), writes: make(map[int64]string)}
			// Deferred, not a Cleanup: t.Context() is cancelled before
			// Cleanup functions run, and a backend may honour it.
			defer func() {
				if !t.Failed() && !s.isClosed() {
					checkInvariants(t, s)
				}
			}()
			tc.run(t, s)
		})
	}
}

type test struct {
	name string
	run  func(t *testing.T, s storage.Store)
}

func tests() []test {
	list := []test{
		{"ValuesAreCopied", testValuesAreCopied},
		{"EmptyValue", testEmptyValue},
		{"List", testList},
		{"ListPaging", testListPaging},
		{"ListPagingAtRevision", testListPagingAtRevision},
		{"ListAtRevision", testListAtRevision},
		{"ListRevisionErrors", testListRevisionErrors},
		{"Compact", testCompact},
		{"RandomOpsMatchModel", testRandomOps},
		{"WatchFromNow", testWatchFromNow},
		{"WatchFromRevision", testWatchFromRevision},
		{"WatchPrefix", testWatchPrefix},
		{"WatchCompacted", testWatchCompacted},
		{"WatchFutureRevision", testWatchFutureRevision},
		{"WatchStop", testWatchStop},
		{"WatchContextCancel", testWatchContextCancel},
		{"ConcurrentCreates", testConcurrentCreates},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"WatchConcurrentWrites", testWatchConcurrentWrites},
		{"WatchHandoverUnderWrites", testWatchHandover},
		{"Close", testClose},
	}
	for _, sc := range stepCases {
		list = append(list, test{"Steps/" + sc.name, func(t *testing.T, s storage.Store) { runSteps(t, s, sc.steps) }})
	}
	return list
}

// checkInvariants checks what must hold after any test: like bbolt's
// PostTestCleanup, it catches damage that the test itself did not look at.
func checkInvariants(t *testing.T, s *checked) {
	t.Helper()
	ctx := t.Context()
	rev := mustRevision(t, s)
	s.mu.Lock()
	maxSeen, writes, dups := s.maxSeen, len(s.writes), s.dups
	s.mu.Unlock()
	if rev < maxSeen {
		t.Errorf("invariant: Revision() = %d, but revision %d was seen earlier", rev, maxSeen)
	}
	for _, d := range dups {
		t.Errorf("invariant: two successful writes returned one revision: %s", d)
	}
	if int64(writes) != rev {
		t.Errorf("invariant: %d successful writes moved the revision from 0 to %d, want one revision per write", writes, rev)
	}
	compacted, err := s.CompactedRevision(ctx)
	if err != nil || compacted > rev {
		t.Errorf("invariant: CompactedRevision() = %d, %v; want <= Revision() = %d", compacted, err, rev)
	}

	full, err := s.List(ctx, "", storage.ListOptions{})
	if err != nil {
		t.Fatalf("invariant: List(\"\") error = %v", err)
	}
	if full.Revision != rev || full.More || full.RemainingCount != 0 {
		t.Errorf("invariant: List(\"\") = revision %d, more %v, remaining %d; want %d, false, 0",
			full.Revision, full.More, full.RemainingCount, rev)
	}
	for i, kv := range full.Items {
		if i > 0 && full.Items[i-1].Key >= kv.Key {
			t.Errorf("invariant: List(\"\") keys out of order: %q before %q", full.Items[i-1].Key, kv.Key)
		}
		if kv.CreateRevision <= 0 || kv.CreateRevision > kv.ModRevision || kv.ModRevision > full.Revision {
			t.Errorf("invariant: List(\"\") item %s: want 0 < CreateRevision <= ModRevision <= list revision %d", fmtKV(kv), full.Revision)
		}
		got, err := s.Get(ctx, kv.Key)
		if err != nil || !equalKV(got, kv) {
			t.Errorf("invariant: Get(%q) = %s, %v; List(\"\") has %s", kv.Key, fmtKV(got), err, fmtKV(kv))
		}
	}
	if compacted <= rev {
		at, err := s.List(ctx, "", storage.ListOptions{Revision: rev})
		if err != nil || !equalKVs(at.Items, full.Items) {
			t.Errorf("invariant: List(\"\", Revision %d) = %s, %v; want %s", rev, fmtKVs(at.Items), err, fmtKVs(full.Items))
		}
	}
	paged := listAllPages(t, s, "", rev, 3)
	if !equalKVs(paged, full.Items) {
		t.Errorf("invariant: List(\"\") in pages of 3 = %s, want %s", fmtKVs(paged), fmtKVs(full.Items))
	}
}

// listAllPages lists prefix at rev in pages of limit, checking the paging
// fields of each page, and returns all items.
func listAllPages(t *testing.T, s storage.Store, prefix string, rev, limit int64) []storage.KeyValue {
	t.Helper()
	all := mustList(t, s, prefix, storage.ListOptions{Revision: rev})
	var items []storage.KeyValue
	start := ""
	for page := 0; page <= len(all.Items); page++ {
		res := mustList(t, s, prefix, storage.ListOptions{Revision: rev, Limit: limit, StartKey: start})
		items = append(items, res.Items...)
		remaining := int64(len(all.Items) - len(items))
		if res.Revision != all.Revision || res.More != (remaining > 0) || res.RemainingCount != remaining {
			t.Errorf("List(%q, Revision %d, Limit %d, StartKey %q) = revision %d, more %v, remaining %d; want %d, %v, %d",
				prefix, rev, limit, start, res.Revision, res.More, res.RemainingCount, all.Revision, remaining > 0, remaining)
		}
		checkHaveValue(t, s, prefix, storage.ListOptions{Revision: rev, Limit: limit, StartKey: start}, res)
		uncounted := mustList(t, s, prefix, storage.ListOptions{Revision: rev, Limit: limit, StartKey: start, NoRemainingCount: true})
		if !equalKVs(uncounted.Items, res.Items) || uncounted.More != res.More || res.More && uncounted.RemainingCount < 1 {
			t.Errorf("List(%q, Revision %d, Limit %d, StartKey %q, NoRemainingCount) = %s, more %v, remaining %d; want %s, more %v",
				prefix, rev, limit, start, fmtKVs(uncounted.Items), uncounted.More, uncounted.RemainingCount, fmtKVs(res.Items), res.More)
		}
		if !res.More || len(res.Items) == 0 {
			return items
		}
		start = res.Items[len(res.Items)-1].Key + "\x00"
	}
	t.Errorf("List(%q) in pages of %d did not end", prefix, limit)
	return items
}

// checkHaveValue lists opts again, saying the caller has every other value:
// the same keys and revisions, each value either as in want or (when said
// to be had) nil, and HaveValue asked with the revisions listed.
func checkHaveValue(t *testing.T, s storage.Store, prefix string, opts storage.ListOptions, want storage.ListResult) {
	t.Helper()
	asked := map[string]int64{}
	opts.HaveValue = func(key string, rev int64) bool {
		asked[key] = rev
		return len(asked)%2 == 0
	}
	got := mustList(t, s, prefix, opts)
	if len(got.Items) != len(want.Items) || got.More != want.More {
		t.Errorf("List(%q, %+v with HaveValue) = %d items, more %v; want %d, %v", prefix, opts, len(got.Items), got.More, len(want.Items), want.More)
		return
	}
	for i, kv := range got.Items {
		w := want.Items[i]
		skipped := kv.Value == nil && w.Value != nil
		if kv.Key != w.Key || kv.ModRevision != w.ModRevision || kv.CreateRevision != w.CreateRevision ||
			!skipped && string(kv.Value) != string(w.Value) || skipped && asked[kv.Key] != kv.ModRevision {
			t.Errorf("List(%q with HaveValue) item %d = %s, want %s (asked about revision %d)", prefix, i, fmtKVs([]storage.KeyValue{kv}), fmtKVs([]storage.KeyValue{w}), asked[kv.Key])
		}
	}
}

func mustList(t *testing.T, s storage.Store, prefix string, opts storage.ListOptions) storage.ListResult {
	t.Helper()
	res, err := s.List(t.Context(), prefix, opts)
	if err != nil {
		t.Fatalf("List(%q, %+v) error = %v", prefix, opts, err)
	}
	return res
}

func mustRevision(t *testing.T, s storage.Store) int64 {
	t.Helper()
	rev, err := s.Revision(t.Context())
	if err != nil {
		t.Fatalf("Revision() error = %v", err)
	}
	return rev
}

func mustCreate(t *testing.T, s storage.Store, key, value string) storage.KeyValue {
	t.Helper()
	kv, err := s.Create(t.Context(), key, []byte(value))
	if err != nil {
		t.Fatalf("Create(%q) error = %v", key, err)
	}
	return kv
}

// equalKV compares two KeyValues; a nil and an empty value are equal.
func equalKV(a, b storage.KeyValue) bool {
	return a.Key == b.Key && bytes.Equal(a.Value, b.Value) &&
		a.CreateRevision == b.CreateRevision && a.ModRevision == b.ModRevision
}

func equalKVs(a, b []storage.KeyValue) bool {
	return slices.EqualFunc(a, b, equalKV)
}

func fmtKV(kv storage.KeyValue) string {
	return fmt.Sprintf("{%q=%q c%d m%d}", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision)
}

func fmtKVs(kvs []storage.KeyValue) string {
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = fmtKV(kv)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func keysOf(kvs []storage.KeyValue) []string {
	keys := make([]string, len(kvs))
	for i, kv := range kvs {
		keys[i] = kv.Key
	}
	return keys
}

// isErr reports whether err matches want; a nil want matches only nil.
func isErr(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}
