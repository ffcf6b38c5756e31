package controllers

import (
	"sync"
	"time"
)

// ExpectationsTimeout is how long a controller waits for the pods it
// created or deleted to show up in its cache before it syncs anyway
// (upstream's controller.ExpectationsTimeout).
const ExpectationsTimeout = 5 * time.Minute

// Expectations are the pod creates and deletes each owner (by key) has
// made and not yet seen in its cache, as upstream's ControllerExpectations:
// an owner with some pending does not manage its pods again until they are
// seen or expire, so that no pod is created or deleted twice. Deletes
// expected with ExpectDeletionsOf are tracked by pod key, as upstream's
// UIDTrackingControllerExpectations: a pod seen first terminating and then
// gone counts once.
type Expectations struct {
	mu    sync.Mutex
	byKey map[string]*expected
	now   func() time.Time
}

type expected struct {
	adds, dels int
	deleting   map[string]bool // the pods whose deletion is awaited, when tracked
	set        time.Time
}

// NewExpectations returns empty expectations on the wall clock.
func NewExpectations() *Expectations { return newExpectationsAt(time.Now) }

func newExpectationsAt(now func() time.Time) *Expectations {
	return &Expectations{byKey: map[string]*expected{}, now: now}
}

// Satisfied reports whether the owner may manage its pods: it expects
// nothing, or what it expected was seen, or has expired.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.byKey[key]
	return !ok || (x.adds <= 0 && x.dels <= 0) || e.now().Sub(x.set) > ExpectationsTimeout
}

// Expect replaces the owner's expectations by adds creates and dels
// deletes.
func (e *Expectations) Expect(key string, adds, dels int) {
	e.set(key, &expected{adds: adds, dels: dels})
}

// ExpectDeletionsOf replaces the owner's expectations by the deletion of
// the pods podKeys, each counted once (DeletionOfObserved).
func (e *Expectations) ExpectDeletionsOf(key string, podKeys []string) {
	deleting := make(map[string]bool, len(podKeys))
	for _, k := range podKeys {
		deleting[k] = true
	}
	e.set(key, &expected{dels: len(deleting), deleting: deleting})
}

func (e *Expectations) set(key string, x *expected) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x.set = e.now()
	e.byKey[key] = x
}

// Lower takes creates and deletes that will never be seen off.
func (e *Expectations) Lower(key string, adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byKey[key]; ok {
		x.adds -= adds
		x.dels -= dels
	}
}

// CreationObserved counts one create seen (or one that will never be).
func (e *Expectations) CreationObserved(key string) { e.Lower(key, 1, 0) }

// DeletionObserved counts one delete seen, for deletes not tracked by pod.
func (e *Expectations) DeletionObserved(key string) { e.Lower(key, 0, 1) }

// DeletionOfObserved counts the deletion of podKey, if it was awaited.
func (e *Expectations) DeletionOfObserved(key, podKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byKey[key]; ok && x.deleting[podKey] {
		delete(x.deleting, podKey)
		x.dels--
	}
}

// Forget drops the owner's expectations (it was deleted).
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byKey, key)
}
