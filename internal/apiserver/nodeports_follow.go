package apiserver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/admitd/admitd/internal/registry"
	"github.com/admitd/admitd/internal/serviceip"
	"github.com/admitd/admitd/internal/storage/layout"
	"github.com/admitd/admitd/pkg/storage"
)

// Node ports are allocated in memory (upstream keeps them in a bitmap it
// compare-and-swaps in etcd, /registry/ranges/servicenodeports; cluster
// IPs are IPAddress objects, serviceips.go). Several servers sharing one
// store each keep their allocator in step with the Services the others
// write through a watch (FollowNodePorts); two servers can still hand out
// one port at the same moment.

// serviceFollow is the state of FollowNodePorts.
type serviceFollow struct {
	mu sync.Mutex
	// seeded is the revision the allocator was seeded at.
	seeded int64
	// following is set once FollowNodePorts runs.
	following bool
	// released are the Services whose ports were given back lately, by
	// UID: a delete through this server is seen twice, by its write
	// observer and by the watch, in either order, and must release once
	// (the ports may have been handed out again in between).
	released map[types.UID]time.Time
	// stored are the node ports that a Service in the store holds while
	// this server's allocator had them already (a create through this
	// server in flight: a dry run, or one that is still to fail). Giving
	// back such a create's allocation must not free them: a stored Service
	// holds them. They are freed when that Service goes.
	stored map[int]bool
}

// claimStored notes that a stored Service holds port although the
// allocator had it already.
func (f *serviceFollow) claimStored(port int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stored == nil {
		f.stored = map[int]bool{}
	}
	f.stored[port] = true
}

// heldByStored reports whether a stored Service holds port (claimStored):
// a create's undo then keeps it allocated.
func (f *serviceFollow) heldByStored(port int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stored[port]
}

// storedGone forgets port's claim: the Service holding it was deleted.
func (f *serviceFollow) storedGone(port int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.stored, port)
}

// releasedFor is how long a release is remembered: far longer than a
// watch event takes to arrive.
const releasedFor = time.Minute

// releaseOnce reports whether the ports of the deleted Service uid are to
// be given back now: always when not following, else the first time only.
func (f *serviceFollow) releaseOnce(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.following {
		return true
	}
	if _, ok := f.released[uid]; ok {
		delete(f.released, uid)
		return false
	}
	now := time.Now()
	for old, at := range f.released {
		if now.Sub(at) > releasedFor {
			delete(f.released, old)
		}
	}
	f.released[uid] = now
	return true
}

// releasedLately reports whether the ports of the Service uid were given
// back and its delete event is still to come.
func (f *serviceFollow) releasedLately(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.released[uid]
	return ok
}

// seedNodePorts marks the node ports of the stored Services as taken: the
// allocator's state is derived from storage at start.
func (s *Server) seedNodePorts(ctx context.Context) error {
	res, ok := s.cat.Lookup(corev1.SchemeGroupVersion.WithResource("services"))
	if !ok || s.cfg.NodePorts == nil {
		return nil
	}
	page, err := s.store.List(ctx, layout.ResourcePrefix(res), storage.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing services: %w", err)
	}
	for _, kv := range page.Items {
		obj, err := layout.Decode(res, kv)
		if err != nil {
			return err
		}
		if svc, ok := obj.(*corev1.Service); ok {
			s.markPortsTaken(svc)
		}
	}
	s.services.mu.Lock()
	s.services.seeded = page.Revision
	s.services.mu.Unlock()
	return nil
}

// markPortsTaken marks the node ports svc holds as taken; a port outside
// the range (it changed since) stays the Service's. One the allocator had
// already is noted as held by a stored Service, so that giving back an
// in-flight create's allocation of it does not free it.
func (s *Server) markPortsTaken(svc *corev1.Service) {
	for p := range nodePortsOf(svc) {
		if errors.Is(s.cfg.NodePorts.Allocate(p), serviceip.ErrPortAllocated) {
			s.services.claimStored(p)
		}
	}
}

// releaseNodePorts gives back the node ports of a deleted Service.
func (s *Server) releaseNodePorts(svc *corev1.Service) {
	for p := range nodePortsOf(svc) {
		s.services.storedGone(p)
		s.cfg.NodePorts.Release(p)
	}
}

// FollowNodePorts marks the node ports of the Services other servers
// create as taken, and gives back those of the Services they delete,
// until ctx ends. Start it after Bootstrap, only when the store is shared.
func (s *Server) FollowNodePorts(ctx context.Context) {
	res, ok := s.cat.Lookup(corev1.SchemeGroupVersion.WithResource("services"))
	if !ok || s.cfg.NodePorts == nil {
		return
	}
	f := &s.services
	f.mu.Lock()
	f.following, f.released = true, map[types.UID]time.Time{}
	from := f.seeded
	f.mu.Unlock()
	for ctx.Err() == nil {
		last, err := s.followServices(ctx, res, from)
		from = last
		if errors.Is(err, storage.ErrCompacted) {
			from, err = s.reseedNodePorts(ctx, res)
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("following services for their node ports, retrying", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// followServices applies the events after revision from until the watch
// ends, and returns the revision of the last one applied.
func (s *Server) followServices(ctx context.Context, res *registry.Resource, from int64) (int64, error) {
	w, err := s.store.Watch(ctx, layout.ResourcePrefix(res), from)
	if err != nil {
		return from, err
	}
	defer w.Stop()
	for ev := range w.Events() {
		s.applyServiceEvent(res, ev)
		from = ev.KV.ModRevision
	}
	return from, w.Err()
}

func (s *Server) applyServiceEvent(res *registry.Resource, ev storage.Event) {
	kv := ev.KV
	if ev.Type == storage.EventDelete {
		if ev.PrevKV == nil {
			return
		}
		kv = *ev.PrevKV
	}
	obj, err := layout.Decode(res, kv)
	svc, ok := obj.(*corev1.Service)
	if err != nil || !ok {
		return
	}
	if ev.Type == storage.EventPut {
		if !s.services.releasedLately(svc.UID) { // else a Service already deleted here
			s.markPortsTaken(svc)
		}
		return
	}
	if s.services.releaseOnce(svc.UID) {
		s.releaseNodePorts(svc)
	}
}

// reseedNodePorts marks every stored Service's node ports taken after the
// watch lost its place (what was deleted meanwhile stays taken), and
// returns the revision to follow from.
func (s *Server) reseedNodePorts(ctx context.Context, res *registry.Resource) (int64, error) {
	page, err := s.store.List(ctx, layout.ResourcePrefix(res), storage.ListOptions{})
	if err != nil {
		return 0, err
	}
	for _, kv := range page.Items {
		if obj, err := layout.Decode(res, kv); err == nil {
			if svc, ok := obj.(*corev1.Service); ok {
				s.markPortsTaken(svc)
			}
		}
	}
	return page.Revision, nil
}
