package statefulset

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
)

// A resource the controller writes and caches.
type resource int

const (
	setsResource resource = iota
	podsResource
	claimsResource
	revisionsResource
	resourceCount
)

var resourceNames = [resourceCount]string{"statefulsets", "pods", "persistentvolumeclaims", "controllerrevisions"}

// consistencyTimeout is how long a write may stay unseen by its cache
// before a sync goes on without it (a relist can miss the revision of an
// object deleted since).
const consistencyTimeout = 10 * time.Second

// written is a write's revision and when it was made.
type written struct {
	revision int64
	at       time.Time
}

// consistency remembers, per set, the last write of each resource, so a
// sync waits until the caches have seen the controller's own writes (as
// upstream's StaleControllerConsistencyStatefulSet does with its
// informers' resourceVersions) instead of acting on a view without them.
type consistency struct {
	seen    [resourceCount]func() int64 // the revision each cache has seen
	mu      sync.Mutex
	pending map[string]*[resourceCount]written
	now     func() time.Time
}

func (c *Controller) wrote(set *appsv1.StatefulSet, r resource, resourceVersion string) {
	rev, err := strconv.ParseInt(resourceVersion, 10, 64)
	if err != nil {
		return
	}
	cs := &c.consistency
	cs.mu.Lock()
	defer cs.mu.Unlock()
	k := key(set.Namespace, set.Name)
	p := cs.pending[k]
	if p == nil {
		p = &[resourceCount]written{}
		cs.pending[k] = p
	}
	if rev > p[r].revision {
		p[r] = written{revision: rev, at: cs.now()}
	}
}

// ensureCaught up returns an error while a cache has not seen a write made
// for the set at key (less than consistencyTimeout ago).
func (cs *consistency) ensureCaughtUp(k string) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	p := cs.pending[k]
	if p == nil {
		return nil
	}
	var err error
	for r := range resourceCount {
		w := p[r]
		switch {
		case w.revision == 0:
		case cs.seen[r]() >= w.revision || cs.now().Sub(w.at) > consistencyTimeout:
			p[r] = written{}
		default:
			err = fmt.Errorf("the %s cache has not yet seen revision %d", resourceNames[r], w.revision)
		}
	}
	if err == nil {
		delete(cs.pending, k)
	}
	return err
}

func (cs *consistency) forget(k string) {
	cs.mu.Lock()
	delete(cs.pending, k)
	cs.mu.Unlock()
}
