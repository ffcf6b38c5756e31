package replicaset

import (
	"sync"
	"time"
)

// expectationsTimeout is how long a controller waits for the pods it
// created or deleted to show up in its cache before it syncs anyway
// (upstream's controller.ExpectationsTimeout).
const expectationsTimeout = 5 * time.Minute

// expectations are the creates and deletes each controller (by key) has
// made and not yet seen in its cache, as upstream's
// UIDTrackingControllerExpectations: a controller with expectations does
// not manage its replicas again until they are met or expire, so a pod it
// created is never created twice. Deletes are tracked by pod key, so a pod
// seen first as terminating and then as deleted counts once.
type expectations struct {
	mu    sync.Mutex
	byKey map[string]*expected
	now   func() time.Time
}

type expected struct {
	adds, dels int
	deleting   map[string]bool // the keys of the pods whose deletion is awaited
	set        time.Time
}

func newExpectations() *expectations {
	return &expectations{byKey: map[string]*expected{}, now: time.Now}
}

// satisfied reports whether the controller may manage its replicas: it
// expects nothing, or what it expected was seen, or has expired.
func (e *expectations) satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.byKey[key]
	if !ok {
		return true
	}
	return (x.adds <= 0 && x.dels <= 0) || e.now().Sub(x.set) > expectationsTimeout
}

// expectCreations replaces the controller's expectations by n creates.
func (e *expectations) expectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byKey[key] = &expected{adds: n, set: e.now()}
}

// expectDeletions replaces the controller's expectations by the deletion
// of the pods podKeys.
func (e *expectations) expectDeletions(key string, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	deleting := make(map[string]bool, len(podKeys))
	for _, k := range podKeys {
		deleting[k] = true
	}
	e.byKey[key] = &expected{dels: len(deleting), deleting: deleting, set: e.now()}
}

// creationObserved counts one create seen (or one that will never be).
func (e *expectations) creationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byKey[key]; ok {
		x.adds--
	}
}

// deletionObserved counts the deletion of podKey, if it was awaited.
func (e *expectations) deletionObserved(key, podKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byKey[key]; ok && x.deleting[podKey] {
		delete(x.deleting, podKey)
		x.dels--
	}
}

// forget drops the controller's expectations (it was deleted).
func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byKey, key)
}
