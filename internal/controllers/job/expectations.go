package job

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// expectationsTimeout is how long a Job waits for the pods it created or
// deleted to show up in the cache before it syncs anyway (upstream's
// controller.ExpectationsTimeout).
const expectationsTimeout = 5 * time.Minute

// expectations count, per Job key, the pod creates and deletes the
// controller made and has not yet seen in its cache (upstream's
// ControllerExpectations): a Job with some pending does not manage its
// pods again until they are seen or expire, so no pod is created twice.
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

// satisfied: nothing pending, or what is pending has expired.
func (e *expectations) satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.byKey[key]
	return !ok || (x.adds <= 0 && x.dels <= 0) || e.now().Sub(x.set) > expectationsTimeout
}

func (e *expectations) expectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byKey[key] = &expected{adds: n, set: e.now()}
}

func (e *expectations) expectDeletions(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byKey[key] = &expected{dels: n, set: e.now()}
}

func (e *expectations) creationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byKey[key]; ok {
		x.adds--
	}
}

func (e *expectations) deletionObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.byKey[key]; ok {
		x.dels--
	}
}

func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byKey, key)
}

// finalizerExpectations are, per Job key, the uids of the pods whose
// tracking finalizer the controller removed and has not yet seen removed
// (upstream's uidTrackingExpectations): such a pod is not counted again.
type finalizerExpectations struct {
	mu    sync.Mutex
	byKey map[string]sets.Set[types.UID]
}

func newFinalizerExpectations() *finalizerExpectations {
	return &finalizerExpectations{byKey: map[string]sets.Set[types.UID]{}}
}

// expected returns a copy of the uids awaited for key.
func (f *finalizerExpectations) expected(key string) sets.Set[types.UID] {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byKey[key].Clone()
}

func (f *finalizerExpectations) expectRemoved(key string, uids []types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byKey[key] == nil {
		f.byKey[key] = sets.New[types.UID]()
	}
	f.byKey[key].Insert(uids...)
}

func (f *finalizerExpectations) removalObserved(key string, uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.byKey[key]; s != nil {
		s.Delete(uid)
	}
}

func (f *finalizerExpectations) forget(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.byKey, key)
}
