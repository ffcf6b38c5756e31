package job

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

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
