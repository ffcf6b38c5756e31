package storagetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/storage"
)

const (
	// waitTimeout bounds every wait for an event that must come.
	waitTimeout = 10 * time.Second
	// quietPeriod is how long a watcher must stay silent to pass as idle.
	quietPeriod = 50 * time.Millisecond
)

// receive reads n events, failing the test if the watch ends or stalls.
func receive(t *testing.T, w storage.Watcher, n int) []storage.Event {
	t.Helper()
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	evs := make([]storage.Event, 0, n)
	for len(evs) < n {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				t.Fatalf("watch ended after %d of %d events: Err() = %v; got %s", len(evs), n, w.Err(), fmtEvents(evs))
			}
			evs = append(evs, ev)
		case <-timeout.C:
			t.Fatalf("received %d of %d events within %s: %s", len(evs), n, waitTimeout, fmtEvents(evs))
		}
	}
	return evs
}

// expectQuiet fails if w delivers an event or ends within quietPeriod.
func expectQuiet(t *testing.T, w storage.Watcher) {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if !ok {
			t.Errorf("watch ended unexpectedly: Err() = %v", w.Err())
		} else {
			t.Errorf("unexpected event %s", fmtEvent(ev))
		}
	case <-time.After(quietPeriod):
	}
}

// expectEnd drains w until Events is closed, then checks Err.
func expectEnd(t *testing.T, w storage.Watcher, wantErr error) {
	t.Helper()
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	for {
		select {
		case _, ok := <-w.Events():
			if ok {
				continue
			}
			if err := w.Err(); !isErr(err, wantErr) {
				t.Errorf("after the watch ended, Err() = %v, want %v", err, wantErr)
			}
			return
		case <-timeout.C:
			t.Fatalf("Events not closed within %s", waitTimeout)
		}
	}
}

func equalEvents(a, b []storage.Event) bool {
	return slices.EqualFunc(a, b, equalEvent)
}

func mustWatch(t *testing.T, s storage.Store, prefix string, after int64) storage.Watcher {
	t.Helper()
	w, err := s.Watch(t.Context(), prefix, after)
	if err != nil {
		t.Fatalf("Watch(%q, %d) error = %v", prefix, after, err)
	}
	t.Cleanup(w.Stop)
	return w
}

func testWatchFromNow(t *testing.T, s storage.Store) {
	m := newModel(t, s)
	m.create("/w/old", "1")
	m.update("/w/old", "2")
	w := mustWatch(t, s, "/w/", 0)
	expectQuiet(t, w)
	m.create("/w/a", "1")
	m.update("/w/a", "2")
	m.create("/x/skip", "1")
	m.delete("/w/a")
	m.create("/w/b", "1")
	m.delete("/w/old")
	want := m.eventsAfter(2, "/w/")
	got := receive(t, w, len(want))
	if !equalEvents(got, want) {
		t.Errorf("Watch(\"/w/\", 0) = %s, want %s", fmtEvents(got), fmtEvents(want))
	}
	for _, ev := range got {
		create := ev.Type == storage.EventPut && ev.KV.CreateRevision == ev.KV.ModRevision
		if create != (ev.PrevKV == nil) {
			t.Errorf("event %s: PrevKV must be set for updates and deletes, nil for creates", fmtEvent(ev))
		}
	}
	expectQuiet(t, w)
}

func testWatchFromRevision(t *testing.T, s storage.Store) {
	m := newModel(t, s)
	historyWrites(m) // 11 revisions, under /p/ and /other/
	for i, tc := range []struct {
		prefix string
		after  int64
	}{
		{"", 1}, {"", 4}, {"", 10}, {"", 11},
		{"/p/", 1}, {"/p/", 3}, {"/p/", 9}, {"/other/", 2},
		{"", 12}, // by now, revision 12 and later are live writes of the rows above
	} {
		w := mustWatch(t, s, tc.prefix, tc.after)
		want := m.eventsAfter(tc.after, tc.prefix)
		if got := receive(t, w, len(want)); !equalEvents(got, want) {
			t.Errorf("Watch(%q, after %d) replay = %s, want %s", tc.prefix, tc.after, fmtEvents(got), fmtEvents(want))
		}
		key := fmt.Sprintf("/p/live%d", i)
		m.create(key, "live")
		if tc.prefix == "/other/" {
			m.update("/other/x", fmt.Sprintf("live%d", i))
		}
		live := m.events[m.rev()-1]
		if got := receive(t, w, 1); !equalEvent(got[0], live) {
			t.Errorf("Watch(%q, after %d) live event = %s, want %s", tc.prefix, tc.after, fmtEvent(got[0]), fmtEvent(live))
		}
		expectQuiet(t, w)
		w.Stop()
	}
}

func testWatchPrefix(t *testing.T, s storage.Store) {
	m := newModel(t, s)
	w := mustWatch(t, s, "/a/", 0)
	for _, k := range []string{"/ab/x", "/a", "/a/1", "/b/1", "/a/2/x", "/", "/a/"} {
		m.create(k, "v")
	}
	want := m.eventsAfter(0, "/a/")
	if got := receive(t, w, len(want)); !equalEvents(got, want) {
		t.Errorf("Watch(\"/a/\") = %s, want %s", fmtEvents(got), fmtEvents(want))
	}
	expectQuiet(t, w)
}

func testWatchCompacted(t *testing.T, s storage.Store) {
	m := newModel(t, s)
	historyWrites(m)
	if err := s.Compact(t.Context(), 5); err != nil {
		t.Fatalf("Compact(5) error = %v", err)
	}
	for _, tc := range []struct {
		after   int64
		wantErr error
	}{
		{1, storage.ErrCompacted},
		{4, storage.ErrCompacted},
		{5, nil}, // events after the compacted revision are all retained
		{6, nil},
		{0, nil},
	} {
		w, err := s.Watch(t.Context(), "", tc.after)
		if !isErr(err, tc.wantErr) {
			t.Errorf("Watch(after %d) after Compact(5) error = %v, want %v", tc.after, err, tc.wantErr)
		}
		if err != nil {
			continue
		}
		var want []storage.Event
		if tc.after != 0 {
			want = m.eventsAfter(tc.after, "")
		}
		if got := receive(t, w, len(want)); !equalEvents(got, want) {
			t.Errorf("Watch(after %d) = %s, want %s", tc.after, fmtEvents(got), fmtEvents(want))
		}
		w.Stop()
	}
}

// testWatchFutureRevision: as in etcd, a watch after a revision that does
// not exist yet waits for the writes after it.
func testWatchFutureRevision(t *testing.T, s storage.Store) {
	m := newModel(t, s)
	m.create("/f/1", "v")
	w := mustWatch(t, s, "", 3)
	m.create("/f/2", "v")
	m.create("/f/3", "v")
	m.create("/f/4", "v")
	want := m.eventsAfter(3, "")
	if got := receive(t, w, 1); !equalEvents(got, want) {
		t.Errorf("Watch(after 3) at revision 1 = %s, want %s", fmtEvents(got), fmtEvents(want))
	}
}

func testWatchStop(t *testing.T, s storage.Store) {
	m := newModel(t, s)
	historyWrites(m)
	idle := mustWatch(t, s, "", 0)
	idle.Stop()
	expectEnd(t, idle, nil)
	idle.Stop() // a second Stop is harmless

	replaying := mustWatch(t, s, "", 1) // ten events to replay
	receive(t, replaying, 1)
	replaying.Stop()
	expectEnd(t, replaying, nil)

	unread := mustWatch(t, s, "", 0)
	for i := range 5 {
		m.create(fmt.Sprintf("/unread/%d", i), "v")
	}
	unread.Stop()
	expectEnd(t, unread, nil)
	m.create("/after/stop", "v") // writers are not held up by stopped watchers
}

func testWatchContextCancel(t *testing.T, s storage.Store) {
	m := newModel(t, s)
	historyWrites(m)
	for _, tc := range []struct {
		name  string
		after int64
		write bool
	}{
		{"idle", 0, false},
		{"replaying", 1, false},
		{"unread events", 0, true},
	} {
		ctx, cancel := context.WithCancel(t.Context())
		w, err := s.Watch(ctx, "", tc.after)
		if err != nil {
			t.Fatalf("%s: Watch error = %v", tc.name, err)
		}
		if tc.write {
			m.create("/ctx/"+tc.name, "v")
		}
		cancel()
		expectEnd(t, w, nil)
	}
	m.create("/after/cancel", "v")
}
