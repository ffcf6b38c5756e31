package daemonset

import (
	"sync"
	"time"
)

// expectationsTimeout is how long a DaemonSet waits for the pods it
// created or deleted to show up in its cache before it syncs anyway
// (upstream's controller.ExpectationsTimeout).
const expectationsTimeout = 5 * time.Minute

// expectations are the creates and deletes each DaemonSet (by key) has
// made and not yet seen in its cache, as upstream's ControllerExpectations:
// until they are met or expire, a sync only writes the status.
type expectations struct {
	mu    sync.Mutex
	byKey map[string]*expected
	now   func() time.Time
}

type expected struct {
	adds, dels int
	set        time.Time
}

func newExpectations() *expectations {
	return &expectations{byKey: map[string]*expected{}, now: time.Now}
}

// satisfied reports whether the DaemonSet may manage its pods: it expects
// nothing, or what it expected was seen, or has expired.
func (e *expectations) satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.byKey[key]
	if !ok {
		return true
	}
	return (x.adds <= 0 && x.dels <= 0) || e.now().Sub(x.set) > expectationsTimeout
}

// expect replaces the DaemonSet's expectations.
func (e *expectations) expect(key string, adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byKey[key] = &expected{adds: adds, dels: dels, set: e.now()}
}

// lower takes creates and deletes that will never be seen off.
func (e *expectations) lower(key string, adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byKey[key]; ok {
		x.adds -= adds
		x.dels -= dels
	}
}

func (e *expectations) creationObserved(key string) { e.lower(key, 1, 0) }
func (e *expectations) deletionObserved(key string) { e.lower(key, 0, 1) }

// forget drops the DaemonSet's expectations (it was deleted).
func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byKey, key)
}
