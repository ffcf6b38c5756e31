package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/admitd/admitd/internal/storage/etcd"
	"github.com/admitd/admitd/pkg/storage"
	"github.com/admitd/admitd/test/etcd/etcdtest"
)

// load is what concurrent writers were told: the revision of every
// acknowledged create, and the errors of the others.
type load struct {
	wg     sync.WaitGroup
	mu     sync.Mutex
	revs   map[string]int64
	failed []error
}

// startLoad creates keys under /load/ from 8 writers until stop is closed
// (at most 2000 creates each); wait for it with l.wg.Wait().
func startLoad(s storage.Store, stop <-chan struct{}) *load {
	l := &load{revs: make(map[string]int64)}
	for w := range 8 {
		l.wg.Go(func() {
			for i := range 2000 {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("/load/%d/%04d", w, i)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				kv, err := s.Create(ctx, key, []byte(key))
				cancel()
				l.mu.Lock()
				if err != nil {
					l.failed = append(l.failed, err)
				} else {
					l.revs[key] = kv.ModRevision
				}
				l.mu.Unlock()
			}
		})
	}
	return l
}

func (l *load) acked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.revs)
}

// waitAcked waits until n more creates have been acknowledged.
func (l *load) waitAcked(t *testing.T, n int) {
	t.Helper()
	target := l.acked() + n
	deadline := time.Now().Add(30 * time.Second)
	for l.acked() < target {
		if time.Now().After(deadline) {
			t.Fatalf("%d creates acknowledged within 30s, want %d", l.acked(), target)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkNoLostWrite checks that every acknowledged create is stored at the
// revision it was acknowledged with, and that every failure was reported
// as the cluster being unavailable.
func (l *load) checkNoLostWrite(t *testing.T, s storage.Store) {
	t.Helper()
	res, err := s.List(t.Context(), "/load/", storage.ListOptions{})
	if err != nil {
		t.Fatalf("List after the load: %v", err)
	}
	stored := make(map[string]int64, len(res.Items))
	for _, kv := range res.Items {
		stored[kv.Key] = kv.ModRevision
	}
	lost := 0
	for key, rev := range l.revs {
		if stored[key] != rev {
			lost++
			if lost < 5 {
				t.Errorf("acknowledged create of %s at revision %d: stored at %d", key, rev, stored[key])
			}
		}
	}
	for _, err := range l.failed {
		if !errors.Is(err, etcd.ErrUnavailable) {
			t.Errorf("write failed with %v, want an error wrapping %v", err, etcd.ErrUnavailable)
		}
	}
	t.Logf("%d creates acknowledged, %d lost; %d failed (unavailable), %d stored", len(l.revs), lost, len(l.failed), len(stored))
}

// TestKillMemberUnderLoad closes the leader of a three-member cluster, then
// a follower, while 8 writers create keys: no acknowledged write is lost,
// and writes go on through the two members left.
func TestKillMemberUnderLoad(t *testing.T) {
	c := etcdtest.Start(t, 3)
	s := openStore(t, c, "")
	stop := make(chan struct{})
	l := startLoad(s, stop)
	end := sync.OnceFunc(func() { close(stop); l.wg.Wait() })
	defer end()
	l.waitAcked(t, 100)
	leader := c.WaitLeader()
	leader.Stop()
	l.waitAcked(t, 100) // a new leader, and the client moved on
	c.Restart(leader)
	l.waitAcked(t, 100)
	follower := c.Members[0]
	if follower == c.WaitLeader() {
		follower = c.Members[1]
	}
	follower.Stop()
	l.waitAcked(t, 100)
	end()
	l.checkNoLostWrite(t, s)
}

// TestQuorumLoss stops two of three members: writes and reads fail with
// ErrUnavailable within the request timeout and watches end with it;
// once the members are back, writes resume and nothing acknowledged is
// lost.
func TestQuorumLoss(t *testing.T) {
	c := etcdtest.Start(t, 3)
	s, err := etcd.Open(t.Context(), etcd.Config{Endpoints: c.Endpoints(), RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before, err := s.Create(t.Context(), "/q/before", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(t.Context(), "/q/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	c.Members[1].Stop()
	c.Members[2].Stop()

	start := time.Now()
	_, err = s.Create(t.Context(), "/q/during", []byte("v"))
	if !errors.Is(err, etcd.ErrUnavailable) {
		t.Errorf("Create without quorum: error = %v, want %v", err, etcd.ErrUnavailable)
	}
	t.Logf("Create without quorum failed after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if _, err := s.Get(t.Context(), "/q/before"); !errors.Is(err, etcd.ErrUnavailable) {
		t.Errorf("Get without quorum: error = %v, want %v", err, etcd.ErrUnavailable)
	}
	select {
	case _, ok := <-w.Events():
		if ok {
			t.Errorf("watch delivered an event without quorum")
		} else if !errors.Is(w.Err(), etcd.ErrUnavailable) {
			t.Errorf("watch ended with %v, want %v", w.Err(), etcd.ErrUnavailable)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("watch still open 10s after quorum was lost")
	}

	t.Logf("quorum lost for %s", time.Since(start).Round(time.Millisecond))
	c.Restart(c.Members[1])
	c.Restart(c.Members[2])
	c.WaitLeader()
	deadline := time.Now().Add(30 * time.Second)
	var after storage.KeyValue
	for {
		if after, err = s.Create(t.Context(), "/q/after", []byte("v")); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("Create after recovery: %v", err)
	}
	t.Logf("writes resumed %s after quorum was lost", time.Since(start).Round(time.Millisecond))
	got, err := s.Get(t.Context(), "/q/before")
	if err != nil || got.ModRevision != before.ModRevision {
		t.Errorf("Get(/q/before) after recovery = %+v, %v; want revision %d", got, err, before.ModRevision)
	}
	w2, err := s.Watch(t.Context(), "/q/", before.ModRevision)
	if err != nil {
		t.Fatalf("Watch after recovery: %v", err)
	}
	defer w2.Stop()
	select {
	case ev := <-w2.Events():
		if ev.KV.Key != "/q/after" && ev.KV.Key != "/q/during" {
			t.Errorf("watch after recovery: first event %s", ev.KV.Key)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("no event on a watch after recovery (create at %d)", after.ModRevision)
	}
}
