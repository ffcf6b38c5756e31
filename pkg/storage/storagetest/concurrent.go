package storagetest

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/storage"
)

const (
	writers         = 8
	writesPerWriter = 80
	totalWrites     = writers * writesPerWriter
)

// createConcurrently creates totalWrites keys under prefix from writers
// goroutines and returns the key written at each revision. With permits,
// each create first takes one.
func createConcurrently(t *testing.T, s storage.Store, prefix string, permits <-chan struct{}) map[int64]string {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		revs = make(map[int64]string)
	)
	for w := range writers {
		wg.Go(func() {
			for i := range writesPerWriter {
				if permits != nil {
					<-permits
				}
				key := fmt.Sprintf("%s%d/%03d", prefix, w, i)
				kv, err := s.Create(t.Context(), key, []byte(key))
				if err != nil {
					t.Errorf("Create(%q) error = %v", key, err)
					return
				}
				mu.Lock()
				if other, dup := revs[kv.ModRevision]; dup {
					t.Errorf("Create(%q) and Create(%q) both returned revision %d", other, key, kv.ModRevision)
				}
				revs[kv.ModRevision] = key
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return revs
}

func testConcurrentCreates(t *testing.T, s storage.Store) {
	revs := createConcurrently(t, s, "/c/", nil)
	for rev := int64(1); rev <= totalWrites; rev++ {
		if _, ok := revs[rev]; !ok {
			t.Errorf("no Create returned revision %d; %d writes must use revisions 1..%d", rev, totalWrites, totalWrites)
		}
	}
	if rev := mustRevision(t, s); rev != totalWrites {
		t.Errorf("Revision() after %d creates = %d", totalWrites, rev)
	}
	res := mustList(t, s, "/c/", storage.ListOptions{})
	if len(res.Items) != totalWrites {
		t.Fatalf("List(\"/c/\") returned %d items, want %d", len(res.Items), totalWrites)
	}
	for _, kv := range res.Items {
		if revs[kv.ModRevision] != kv.Key || string(kv.Value) != kv.Key {
			t.Errorf("List item %s, but Create(%q) returned revision %d", fmtKV(kv), revs[kv.ModRevision], kv.ModRevision)
		}
	}
	// A long replay: every create again, in order.
	w := mustWatch(t, s, "/c/", 1)
	checkDense(t, "Watch(\"/c/\", 1)", receive(t, w, totalWrites-1), 2, totalWrites, revs)
}

// testConcurrentUpdates increments a counter with compare-and-swap from
// several goroutines: no increment may be lost and conflicts cost nothing.
func testConcurrentUpdates(t *testing.T, s storage.Store) {
	const perWriter = 20
	mustCreate(t, s, "/counter", "0")
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for done := 0; done < perWriter; {
				cur, err := s.Get(t.Context(), "/counter")
				if err != nil {
					t.Errorf("Get error = %v", err)
					return
				}
				n, _ := strconv.Atoi(string(cur.Value))
				_, err = s.Update(t.Context(), "/counter", []byte(strconv.Itoa(n+1)), cur.ModRevision)
				switch {
				case err == nil:
					done++
				case !errors.Is(err, storage.ErrConflict):
					t.Errorf("Update error = %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, err := s.Get(t.Context(), "/counter")
	want := kv("/counter", strconv.Itoa(writers*perWriter), 1, 1+writers*perWriter)
	if err != nil || !equalKV(got, want) {
		t.Errorf("counter after %d increments = %s, %v; want %s", writers*perWriter, fmtKV(got), err, fmtKV(want))
	}
}

// watchAsync reads w in the background until it has an event at stopRev or
// later; wait returns the events or fails the test.
func watchAsync(w storage.Watcher, stopRev int64) (wait func(t *testing.T) []storage.Event) {
	type result struct {
		evs []storage.Event
		err error
	}
	done := make(chan result, 1)
	go func() {
		var evs []storage.Event
		timeout := time.After(waitTimeout)
		for {
			select {
			case ev, ok := <-w.Events():
				if !ok {
					done <- result{evs, fmt.Errorf("watch ended early: Err() = %v", w.Err())}
					return
				}
				evs = append(evs, ev)
				if ev.KV.ModRevision >= stopRev {
					done <- result{evs, nil}
					return
				}
			case <-timeout:
				done <- result{evs, fmt.Errorf("no event at revision %d within %s", stopRev, waitTimeout)}
				return
			}
		}
	}()
	return func(t *testing.T) []storage.Event {
		t.Helper()
		r := <-done
		if r.err != nil {
			t.Fatalf("%v; got %d events", r.err, len(r.evs))
		}
		return r.evs
	}
}

// checkDense checks that evs are the creates of revisions from..to in order.
func checkDense(t *testing.T, name string, evs []storage.Event, from, to int64, revs map[int64]string) {
	t.Helper()
	if int64(len(evs)) != to-from+1 {
		t.Errorf("%s: got %d events, want revisions %d..%d", name, len(evs), from, to)
	}
	for i, ev := range evs {
		want := from + int64(i)
		if ev.KV.ModRevision != want || ev.Type != storage.EventPut || ev.PrevKV != nil || ev.KV.Key != revs[want] {
			t.Errorf("%s: event %d = %s, want the create of %q at revision %d", name, i, fmtEvent(ev), revs[want], want)
			return
		}
	}
}

func testWatchConcurrentWrites(t *testing.T, s storage.Store) {
	w := mustWatch(t, s, "/c/", 0)
	wait := watchAsync(w, totalWrites)
	revs := createConcurrently(t, s, "/c/", nil)
	checkDense(t, "Watch(\"/c/\", 0)", wait(t), 1, totalWrites, revs)
	expectQuiet(t, w)
}

// testWatchHandover starts watchers from past revisions while writers run,
// so that replay and live delivery overlap: each must see every revision
// after its start exactly once, in order.
func testWatchHandover(t *testing.T, s storage.Store) {
	type started struct {
		after, from int64 // from: the first revision the watcher must see
		wait        func(*testing.T) []storage.Event
	}
	var watchers []started
	// The writes are let through in phases, so that every watcher starts
	// while writes are in flight and has writes to see after it started.
	const phase = totalWrites / 8
	permits := make(chan struct{}, totalWrites)
	release := func(n int) {
		for range n {
			permits <- struct{}{}
		}
	}
	revsc := make(chan map[int64]string, 1)
	go func() { revsc <- createConcurrently(t, s, "/h/", permits) }()
	for i := range 6 {
		release(phase)
		rev := waitRevision(t, s, int64(i*phase+phase/2))
		after, from := max(rev-int64(20*i), 1), int64(0)
		if i == 0 {
			after = 0 // from now: the first event must follow rev
			from = rev
		}
		from = max(from, after) + 1
		w := mustWatch(t, s, "", after)
		watchers = append(watchers, started{after, from, watchAsync(w, totalWrites)})
	}
	release(totalWrites - 6*phase)
	revs := <-revsc
	for _, w := range watchers {
		evs := w.wait(t)
		name := fmt.Sprintf("Watch(\"\", %d) under concurrent writes", w.after)
		if w.after == 0 && len(evs) > 0 {
			// A watch from now may start after any revision not before the
			// one seen before it was opened, but must then be dense.
			if first := evs[0].KV.ModRevision; first < w.from {
				t.Errorf("%s: first event at revision %d, want %d or later", name, first, w.from)
			}
			w.from = evs[0].KV.ModRevision
		}
		checkDense(t, name, evs, w.from, totalWrites, revs)
	}
}

// waitRevision polls until the store's revision reaches target.
func waitRevision(t *testing.T, s storage.Store, target int64) int64 {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		rev := mustRevision(t, s)
		if rev >= target {
			return rev
		}
		if time.Now().After(deadline) {
			t.Fatalf("revision %d not reached within %s (at %d)", target, waitTimeout, rev)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func testClose(t *testing.T, s storage.Store) {
	ctx := t.Context()
	mustCreate(t, s, "/a", "1")
	w := mustWatch(t, s, "", 0)
	if err := s.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	expectEnd(t, w, storage.ErrClosed)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Get", func() error { _, err := s.Get(ctx, "/a"); return err }},
		{"List", func() error { _, err := s.List(ctx, "", storage.ListOptions{}); return err }},
		{"Create", func() error { _, err := s.Create(ctx, "/b", nil); return err }},
		{"Update", func() error { _, err := s.Update(ctx, "/a", nil, 0); return err }},
		{"Delete", func() error { _, _, err := s.Delete(ctx, "/a", 0); return err }},
		{"Watch", func() error { _, err := s.Watch(ctx, "", 0); return err }},
		{"Revision", func() error { _, err := s.Revision(ctx); return err }},
		{"Compact", func() error { return s.Compact(ctx, 1) }},
		{"CompactedRevision", func() error { _, err := s.CompactedRevision(ctx); return err }},
	} {
		if err := tc.call(); !errors.Is(err, storage.ErrClosed) {
			t.Errorf("%s after Close error = %v, want %v", tc.name, err, storage.ErrClosed)
		}
	}
	_ = s.Close() // a second Close must not panic
}
