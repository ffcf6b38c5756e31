package bolt

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/storage"
)

// stressChanges is how many changes the writers make; stressKeys how many
// keys they share.
const (
	stressChanges = 2000
	stressKeys    = 30
)

// listSeen is what a List returned: its revision and items.
type listSeen struct {
	rev   int64
	items []storage.KeyValue
}

// getSeen is what a Get returned between two readings of the revision.
type getSeen struct {
	lo, hi int64
	key    string
	kv     storage.KeyValue
	found  bool
}

// readsSeen gathers what the readers saw.
type readsSeen struct {
	mu    sync.Mutex
	lists []listSeen
	gets  []getSeen
}

// Reads stay consistent while checkpoints run beside the writes: 6 writers
// create, update and delete 30 keys (with Compacts), checkpoints start
// every 4 changes, and 4 readers List and Get meanwhile. Every List must
// equal the state at its revision and every Get a state between the
// revisions read around it, the states rebuilt from a watch from revision
// 0. (From the review of the two-file log.)
func TestReadsStayConsistentAcrossCheckpoints(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, filepath.Join(t.TempDir(), "admitd.db"), Options{CheckpointEvents: 4, CheckpointInterval: time.Millisecond, WatchCoalescing: -1})
	const last = stressChanges + 10 // the writers' changes, then padding up to here
	history := watchUpTo(t, s, last)

	var changes atomic.Int64
	var writers, readers sync.WaitGroup
	for i := range 6 {
		writers.Go(func() { writeRandomly(t, s, rand.New(rand.NewPCG(uint64(i), 1)), &changes) })
	}
	seen := &readsSeen{}
	stop := make(chan struct{})
	for i := range 4 {
		readers.Go(func() { readRandomly(t, s, rand.New(rand.NewPCG(uint64(i), 2)), seen, stop) })
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	for rev, _ := s.Revision(ctx); rev < last; rev++ {
		if _, err := s.Create(ctx, fmt.Sprintf("/pad/%d", rev), nil); err != nil {
			t.Fatal(err)
		}
	}
	states := statesOf(t, <-history)
	checkLists(t, seen.lists, states)
	checkGets(t, seen.gets, states)
	t.Logf("%d lists, %d gets checked", len(seen.lists), len(seen.gets))
}

// watchUpTo watches everything from revision 0 and sends the events up to
// revision last once they have all come (or the test fails after 10 s).
func watchUpTo(t *testing.T, s *Store, last int64) <-chan []storage.Event {
	w, err := s.Watch(context.Background(), "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan []storage.Event, 1)
	go func() {
		var events []storage.Event
		timeout := time.After(time.Minute)
		for {
			select {
			case ev := <-w.Events():
				events = append(events, ev)
				if ev.KV.ModRevision >= last {
					out <- events
					return
				}
			case <-timeout:
				t.Errorf("the watch got %d events", len(events))
				out <- events
				return
			}
		}
	}()
	return out
}

// writeRandomly creates, updates and deletes random keys (compacting now
// and then) until stressChanges changes are made between all writers.
func writeRandomly(t *testing.T, s *Store, r *rand.Rand, changes *atomic.Int64) {
	ctx := context.Background()
	for changes.Load() < stressChanges {
		key := fmt.Sprintf("/k/%d", r.IntN(stressKeys))
		var err error
		switch r.IntN(3) {
		case 0:
			_, err = s.Create(ctx, key, []byte(fmt.Sprint(r.Int())))
		case 1:
			_, err = s.Update(ctx, key, []byte(fmt.Sprint(r.Int())), 0)
		default:
			_, _, err = s.Delete(ctx, key, 0)
		}
		switch {
		case err == nil:
			changes.Add(1)
		case !errors.Is(err, storage.ErrKeyExists) && !errors.Is(err, storage.ErrNotFound):
			t.Error(err)
			return
		}
		if r.IntN(200) == 0 {
			if rev, _ := s.Revision(ctx); rev > 50 {
				_ = s.Compact(ctx, rev-50)
			}
		}
	}
}

// readRandomly lists the keys or gets one, until stop closes.
func readRandomly(t *testing.T, s *Store, r *rand.Rand, seen *readsSeen, stop <-chan struct{}) {
	ctx := context.Background()
	for {
		select {
		case <-stop:
			return
		default:
		}
		if r.IntN(2) == 0 {
			res, err := s.List(ctx, "/k/", storage.ListOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			seen.mu.Lock()
			seen.lists = append(seen.lists, listSeen{res.Revision, res.Items})
			seen.mu.Unlock()
			continue
		}
		key := fmt.Sprintf("/k/%d", r.IntN(stressKeys))
		lo, _ := s.Revision(ctx)
		kv, err := s.Get(ctx, key)
		hi, _ := s.Revision(ctx)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			t.Error(err)
			return
		}
		seen.mu.Lock()
		seen.gets = append(seen.gets, getSeen{lo, hi, key, kv, err == nil})
		seen.mu.Unlock()
	}
}

// statesOf rebuilds the keys under /k/ after each revision (index) from a
// watch's events.
func statesOf(t *testing.T, events []storage.Event) []map[string]storage.KeyValue {
	states := []map[string]storage.KeyValue{{}}
	for i, ev := range events {
		if ev.KV.ModRevision != int64(i+1) {
			t.Fatalf("watch event %d at revision %d", i, ev.KV.ModRevision)
		}
		next := maps.Clone(states[i])
		if strings.HasPrefix(ev.KV.Key, "/k/") {
			if ev.Type == storage.EventDelete {
				delete(next, ev.KV.Key)
			} else {
				next[ev.KV.Key] = ev.KV
			}
		}
		states = append(states, next)
	}
	return states
}

// checkLists: every List equals the state at its revision.
func checkLists(t *testing.T, lists []listSeen, states []map[string]storage.KeyValue) {
	for _, l := range lists {
		want := states[l.rev]
		if len(want) != len(l.items) {
			t.Fatalf("list at %d: %d items, want %d", l.rev, len(l.items), len(want))
		}
		for _, kv := range l.items {
			if w := want[kv.Key]; w.ModRevision != kv.ModRevision || string(w.Value) != string(kv.Value) {
				t.Fatalf("list at %d: %s=%s@%d, want %s@%d", l.rev, kv.Key, kv.Value, kv.ModRevision, w.Value, w.ModRevision)
			}
		}
	}
}

// checkGets: every Get saw a state between the revisions read around it.
func checkGets(t *testing.T, gets []getSeen, states []map[string]storage.KeyValue) {
	for _, g := range gets {
		if !anyStateHas(states, g) {
			t.Fatalf("get %s between %d and %d = %+v found=%v; no state matches", g.key, g.lo, g.hi, g.kv, g.found)
		}
	}
}

func anyStateHas(states []map[string]storage.KeyValue, g getSeen) bool {
	for r := g.lo; r <= g.hi && r < int64(len(states)); r++ {
		w, found := states[r][g.key]
		if found == g.found && (!found || (w.ModRevision == g.kv.ModRevision && string(w.Value) == string(g.kv.Value))) {
			return true
		}
	}
	return false
}
