package bolt

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/admitd/admitd/pkg/storage"
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

// Reads stay consistent while checkpoints run beside the writes: 6 writers
// create, update and delete 30 keys (with Compacts), checkpoints start
// every 4 changes, and 4 readers List and Get meanwhile. Every List must
// equal the state at its revision and every Get a state between the
// revisions read around it, the states rebuilt from a watch from revision
// 0. (From the review of the two-file log.)
func TestReadsStayConsistentAcrossCheckpoints(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "admitd.db")
	s := mustOpen(t, path, Options{CheckpointEvents: 4, CheckpointInterval: time.Millisecond, WatchCoalescing: -1})
	w, err := s.Watch(ctx, "/", 0)
	if err != nil {
		t.Fatal(err)
	}
	var hist []storage.Event
	histDone := make(chan struct{})
	const total = 2000
	go func() {
		defer close(histDone)
		for ev := range w.Events() {
			hist = append(hist, ev)
			if ev.KV.ModRevision >= total+10 {
				return
			}
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var snaps []listSeen
	var gets []getSeen
	stop := make(chan struct{})
	var written sync.WaitGroup
	var count int64
	var cmu sync.Mutex
	for wr := range 6 {
		written.Add(1)
		go func() {
			defer written.Done()
			r := rand.New(rand.NewPCG(uint64(wr), 1))
			for {
				cmu.Lock()
				if count >= total {
					cmu.Unlock()
					return
				}
				cmu.Unlock()
				key := fmt.Sprintf("/k/%d", r.IntN(30))
				var err error
				switch r.IntN(3) {
				case 0:
					_, err = s.Create(ctx, key, []byte(fmt.Sprint(r.Int())))
				case 1:
					_, err = s.Update(ctx, key, []byte(fmt.Sprint(r.Int())), 0)
				default:
					_, _, err = s.Delete(ctx, key, 0)
				}
				if err == nil {
					cmu.Lock()
					count++
					cmu.Unlock()
				} else if !errors.Is(err, storage.ErrKeyExists) && !errors.Is(err, storage.ErrNotFound) {
					t.Error(err)
					return
				}
				if r.IntN(200) == 0 {
					rev, _ := s.Revision(ctx)
					if rev > 50 {
						_ = s.Compact(ctx, rev-50)
					}
				}
			}
		}()
	}
	for rd := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(rd), 2))
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
					mu.Lock()
					snaps = append(snaps, listSeen{res.Revision, res.Items})
					mu.Unlock()
				} else {
					key := fmt.Sprintf("/k/%d", r.IntN(30))
					lo, _ := s.Revision(ctx)
					kv, err := s.Get(ctx, key)
					hi, _ := s.Revision(ctx)
					if err != nil && !errors.Is(err, storage.ErrNotFound) {
						t.Error(err)
						return
					}
					mu.Lock()
					gets = append(gets, getSeen{lo, hi, key, kv, err == nil})
					mu.Unlock()
				}
			}
		}()
	}
	written.Wait()
	close(stop)
	wg.Wait()
	final, _ := s.Revision(ctx)
	for {
		if final >= total+10 {
			break
		}
		_, err := s.Create(ctx, fmt.Sprintf("/pad/%d", final), nil)
		if err != nil {
			t.Fatal(err)
		}
		final++
	}
	select {
	case <-histDone:
	case <-time.After(10 * time.Second):
		t.Fatalf("watch got %d events", len(hist))
	}
	// the state after each revision, from the watch
	states := make([]map[string]storage.KeyValue, len(hist)+1)
	cur := map[string]storage.KeyValue{}
	states[0] = map[string]storage.KeyValue{}
	for i, ev := range hist {
		if ev.KV.ModRevision != int64(i+1) {
			t.Fatalf("watch event %d at revision %d", i, ev.KV.ModRevision)
		}
		next := make(map[string]storage.KeyValue, len(cur))
		for k, v := range cur {
			next[k] = v
		}
		if ev.Type == storage.EventDelete && strings.HasPrefix(ev.KV.Key, "/k/") {
			delete(next, ev.KV.Key)
		} else {
			if strings.HasPrefix(ev.KV.Key, "/k/") {
				next[ev.KV.Key] = ev.KV
			}
		}
		cur = next
		states[i+1] = cur
	}
	for _, sn := range snaps {
		want := states[sn.rev]
		if len(want) != len(sn.items) {
			t.Fatalf("list at %d: %d items, want %d", sn.rev, len(sn.items), len(want))
		}
		for _, kv := range sn.items {
			w := want[kv.Key]
			if w.ModRevision != kv.ModRevision || string(w.Value) != string(kv.Value) {
				t.Fatalf("list at %d: %s=%s@%d, want %s@%d", sn.rev, kv.Key, kv.Value, kv.ModRevision, w.Value, w.ModRevision)
			}
		}
	}
	for _, g := range gets {
		ok := false
		for r := g.lo; r <= g.hi && r <= int64(len(hist)); r++ {
			w, found := states[r][g.key]
			if found == g.found && (!found || (w.ModRevision == g.kv.ModRevision && string(w.Value) == string(g.kv.Value))) {
				ok = true
				break
			}
		}
		if !ok {
			t.Fatalf("get %s between %d and %d = %+v found=%v; no state matches", g.key, g.lo, g.hi, g.kv, g.found)
		}
	}
	t.Logf("%d lists, %d gets checked", len(snaps), len(gets))
}
